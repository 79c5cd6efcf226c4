//! What the folder of large results (`<home>/results`, `docs/src/configure/calls.md` "Large
//! results") must not give away or put up with: the home's absolute path in what a caller reads
//! (the note, its `_meta`, an error), and a folder or result files others can read. The server is
//! the real demo-server's `big`.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::StdioClient;

/// A home whose one server `demo` runs `demo-server --big-lines`, results over 50 tokens cut.
fn env() -> Env {
    let env = Env::new();
    write_config(
        &env,
        json!({ "demo": demo(&["--big-lines"]) }),
        &["demo"],
        json!({ "maxResultTokens": 50 }),
    );
    env
}

/// `call --json big {"size": 10000}`: the result as JSON.
fn call_big(env: &Env) -> Value {
    let (code, stdout, stderr) =
        env.run(&["call", "--json", "big", r#"{"size": 10000}"#], Duration::from_secs(120));
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:.500}"))
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The note, its `_meta`, `serve`'s result and link, and `resources/read`'s "not found" name
/// the folder as `<home>/results`; a folder that cannot be created is named so too. The
/// home's absolute path (whose account, which machine) appears in none of them.
#[test]
fn no_note_or_error_names_the_homes_absolute_path() {
    let env = env();
    let home = env.home().display().to_string();

    let result = call_big(&env);
    let text = result.to_string();
    assert!(!text.contains(&home), "the home's path reached the caller: {text}");
    let note = &result["content"][1];
    let uri = note["_meta"]["toolport/storedResult"]["uri"].as_str().unwrap_or_default();
    let id = uri.strip_prefix("toolport://results/").unwrap_or_else(|| panic!("{result}"));
    let shown = format!("<home>/results/{id}.txt");
    assert_eq!(note["_meta"]["toolport/storedResult"]["path"], shown.as_str(), "{result}");
    let said = note["text"].as_str().unwrap_or_default();
    assert!(said.ends_with(&format!("; the whole result is stored at {shown} ({uri})]")), "{said}");
    assert!(env.home().join("results").join(format!("{id}.txt")).is_file());

    let mut client = StdioClient::start(&env, &[]);
    let answer = client.request("tools/call", json!({ "name": "big", "arguments": { "size": 10000 } }));
    assert_eq!(answer["result"]["content"].as_array().map(Vec::len), Some(3), "{answer}");
    assert!(!answer.to_string().contains(&home), "the home's path reached the client: {answer}");
    let unknown = "0123456789abcdef0123456789abcdef";
    let missing = client.request("resources/read", json!({ "uri": format!("toolport://results/{unknown}") }));
    assert_eq!(
        missing["error"]["message"].as_str(),
        Some(
            format!(
                "no stored result {unknown} in <home>/results (results are removed oldest first to keep the folder small)"
            )
            .as_str()
        ),
        "{missing}"
    );
    drop(client);

    // The folder cannot be made (a file is in its place): the note says why, in the same terms.
    std::fs::remove_dir_all(env.home().join("results")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(env.home().join("results"), "not a folder").unwrap_or_else(|e| panic!("{e}"));
    let result = call_big(&env);
    let said = result["content"][1]["text"].as_str().unwrap_or_default();
    assert!(said.contains("; it could not be stored: cannot create <home>/results: "), "{result}");
    assert!(!result.to_string().contains(&home), "the home's path reached the caller: {result}");
}

/// A `<home>/results` that already exists readable by others (made by hand, or under a loose
/// umask), holding a result file others can read: the next stored result makes the folder
/// 0700 and every result in it 0600.
#[test]
fn a_loose_results_folder_and_its_files_are_made_private() {
    let env = env();
    let dir = env.home().join("results");
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
    let old = dir.join("0123456789abcdef0123456789abcdef.txt");
    std::fs::write(&old, "an older result").unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap_or_else(|e| panic!("{e}"));

    let result = call_big(&env);
    let uri = result["content"][1]["_meta"]["toolport/storedResult"]["uri"].as_str().unwrap_or_default();
    let new = dir.join(format!("{}.txt", uri.trim_start_matches("toolport://results/")));
    assert_eq!((mode(&dir), mode(&new), mode(&old)), (0o700, 0o600, 0o600), "{result}");
    assert_eq!(std::fs::read_to_string(&old).ok().as_deref(), Some("an older result"));
}

/// A `<home>/results` owned by someone else is not written to: its owner could read every
/// result and replace one before it is served. The result is still cut, and the note says
/// why. Only root can give a folder away, so the check runs where the tests run as root (the
/// CI's containers); elsewhere `results_store`'s unit test is all there is.
#[test]
fn someone_elses_results_folder_is_refused_and_nothing_is_stored_in_it() {
    let env = env();
    // The home was made by this process: its owner is who the tests run as.
    let me = std::fs::metadata(env.home()).map(|m| m.uid()).unwrap_or_else(|e| panic!("{e}"));
    if me != 0 {
        eprintln!("not root: cannot make a folder someone else's; covered by results_store's unit test");
        return;
    }
    let dir = env.home().join("results");
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap_or_else(|e| panic!("{e}"));
    let result = call_big(&env);
    let said = result["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        said.ends_with("; it could not be stored: <home>/results is owned by uid 65534, not by you (uid 0)]"),
        "{result}"
    );
    assert!(result["content"][1].get("_meta").is_none(), "{result}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{e}")).flatten().collect();
    assert!(left.is_empty(), "written into someone else's folder: {left:?}");
}
