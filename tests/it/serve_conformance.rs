//! The official MCP conformance suite's server scenarios (`tests/conformance/server.sh`) run
//! against server-everything directly and through `toolport serve --http` fronting it. The
//! verdict is the script's (no check that passes directly may fail through toolport, and
//! `dns-rebinding-protection` must pass against toolport); this test also reads the table it
//! prints, so a script that stopped comparing cannot pass quietly. A suite or peer that cannot
//! be installed fails the test (it never skips).

/// One row of the script's table: `| scenario / check | direct | through toolport |`.
struct Row<'a> {
    check: &'a str,
    direct: &'a str,
    through: &'a str,
}

fn rows(table: &str) -> Vec<Row<'_>> {
    table
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> =
                line.trim().strip_prefix('|')?.strip_suffix('|')?.split('|').map(str::trim).collect();
            match cells[..] {
                [check, direct, through] if check.contains(" / ") => Some(Row { check, direct, through }),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn serve_keeps_every_server_check_that_passes_directly() {
    let (out, stdout, stderr) = crate::conformance::run_script("conformance/server.sh");
    assert!(out.status.success(), "conformance through toolport regressed:\n{stdout}\n{stderr}");

    let rows = rows(&stdout);
    // The suite's active server scenarios at 0.2.0-alpha.12 give 65 checks; a much shorter
    // table means a run that broke off, not a pass.
    assert!(rows.len() >= 60, "only {} checks in the table:\n{stdout}", rows.len());
    for row in &rows {
        if row.direct == "pass" {
            assert_eq!(
                row.through, "pass",
                "{} passes directly but not through toolport:\n{stdout}",
                row.check
            );
        }
    }
    for check in ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"] {
        let row = rows.iter().find(|r| r.check == format!("dns-rebinding-protection / {check}"));
        let row = row.unwrap_or_else(|| panic!("dns-rebinding-protection / {check} did not run:\n{stdout}"));
        assert_eq!(row.through, "pass", "toolport serve must reject DNS rebinding:\n{stdout}");
    }
    let direct_passes = rows.iter().filter(|r| r.direct == "pass").count();
    assert!(direct_passes >= 40, "server-everything passed only {direct_passes} checks directly:\n{stdout}");
}
