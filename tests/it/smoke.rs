use crate::common::toolport;

#[test]
fn help_lists_the_commands() {
    let out = toolport().arg("--help").output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["mcp", "tools", "call", "session", "acp", "plugin", "demo"] {
        assert!(text.contains(cmd), "--help lacks {cmd}: {text}");
    }
}
