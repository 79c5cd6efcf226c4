//! The built-in sandboxed servers (`{"type": "wasm", "builtin": …}`) in one long-lived session:
//! `files` lists, reads and writes only within its granted folders (a `..`, an absolute path
//! elsewhere and a symbolic link leading out are refused; a read-only folder refuses writes),
//! and `fetch` reaches a granted loopback HTTP server while another port is refused, in the
//! server's words and in the host's own record (`denied=` in the status view).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::json;

use crate::support::common::Env;
use crate::support::session::Scripted;

fn write_setup(env: &Env, servers: serde_json::Value, enabled: &[&str]) {
    std::fs::write(env.store(), json!({ "mcpServers": servers }).to_string())
        .unwrap_or_else(|e| panic!("write store: {e}"));
    let file = env.workspace_file();
    std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/")))
        .unwrap_or_else(|e| panic!("workspace folder: {e}"));
    std::fs::write(&file, json!({ "enabledMcpServers": enabled }).to_string())
        .unwrap_or_else(|e| panic!("write workspace: {e}"));
}

/// A session whose only server is the built-in `files`, granted `data` as `/data`.
fn files_on_data(env: &Env, data: &Path) -> Scripted {
    write_setup(
        env,
        json!({ "files": { "type": "wasm", "builtin": "files", "grants": { "dirs": [
            { "host": data, "guest": "/data" },
        ] } } }),
        &["files"],
    );
    Scripted::start(env)
}

fn call(session: &mut Scripted, tool: &str, arguments: serde_json::Value) -> String {
    session.run(&format!("/call {tool} {arguments}")).trim_end().to_string()
}

#[test]
fn files_works_inside_its_folders_and_refuses_every_way_out() {
    let env = Env::new();
    let ro = tempfile::tempdir().unwrap_or_else(|e| panic!("ro dir: {e}"));
    let rw = tempfile::tempdir().unwrap_or_else(|e| panic!("rw dir: {e}"));
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("outside dir: {e}"));
    std::fs::write(ro.path().join("a.txt"), "granted text\n").unwrap_or_else(|e| panic!("a.txt: {e}"));
    std::fs::create_dir(ro.path().join("sub")).unwrap_or_else(|e| panic!("sub: {e}"));
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "not for the server\n").unwrap_or_else(|e| panic!("secret: {e}"));
    std::os::unix::fs::symlink(&secret, ro.path().join("out")).unwrap_or_else(|e| panic!("symlink: {e}"));
    write_setup(
        &env,
        json!({ "files": { "type": "wasm", "builtin": "files", "grants": { "dirs": [
            { "host": ro.path(), "guest": "/ro" },
            { "host": rw.path(), "guest": "/rw", "mode": "rw" },
        ] } } }),
        &["files"],
    );
    let mut s = Scripted::start(&env);

    let listing = call(&mut s, "list_directory", json!({ "path": "/ro" }));
    assert_eq!(listing, "[FILE] a.txt\n[FILE] out\n[DIR] sub", "{listing}");
    assert_eq!(call(&mut s, "read_text_file", json!({ "path": "/ro/a.txt" })), "granted text");
    // Relative paths are taken from the first folder.
    assert_eq!(call(&mut s, "read_text_file", json!({ "path": "a.txt" })), "granted text");

    assert_eq!(
        call(&mut s, "read_text_file", json!({ "path": "/ro/../etc/passwd" })),
        "tool error: refused: /ro/../etc/passwd: paths with '..' are not allowed"
    );
    assert_eq!(
        call(&mut s, "read_text_file", json!({ "path": "/etc/passwd" })),
        "tool error: refused: /etc/passwd is outside the allowed folders"
    );
    let escaped = secret.display().to_string();
    let answer = call(&mut s, "read_text_file", json!({ "path": escaped }));
    assert_eq!(answer, format!("tool error: refused: {escaped} is outside the allowed folders"));
    let through_link = call(&mut s, "read_text_file", json!({ "path": "/ro/out" }));
    assert!(
        through_link.starts_with("tool error: refused: cannot read /ro/out: not permitted by the sandbox"),
        "{through_link}"
    );
    assert!(!through_link.contains("not for the server"), "{through_link}");

    assert_eq!(
        call(&mut s, "write_text_file", json!({ "path": "/ro/new.txt", "content": "x" })),
        "tool error: refused: /ro/new.txt is in a read-only folder"
    );
    assert!(!ro.path().join("new.txt").exists());

    let wrote = call(&mut s, "write_text_file", json!({ "path": "/rw/new.txt", "content": "written" }));
    assert!(!wrote.starts_with("tool error"), "{wrote}");
    let on_disk = std::fs::read_to_string(rw.path().join("new.txt")).unwrap_or_default();
    assert_eq!(on_disk, "written");
    let moved = call(&mut s, "move_file", json!({ "source": "/rw/new.txt", "destination": "/rw/moved.txt" }));
    assert!(!moved.starts_with("tool error"), "{moved}");
    assert!(rw.path().join("moved.txt").exists() && !rw.path().join("new.txt").exists());
    let deleted = call(&mut s, "delete_file", json!({ "path": "/rw/moved.txt" }));
    assert!(!deleted.starts_with("tool error"), "{deleted}");
    assert!(!rw.path().join("moved.txt").exists());
    assert_eq!(
        call(&mut s, "delete_file", json!({ "path": "/ro/a.txt" })),
        "tool error: refused: /ro/a.txt is in a read-only folder"
    );
    assert!(ro.path().join("a.txt").exists());

    let status = s.run("/mcp");
    assert!(status.contains("- files | type=wasm | state=connected"), "{status}");
    assert!(s.quit().success());
}

/// The walks and reads of `files` go through the guest's own descriptors (`folder.rs` in
/// server-files): every entry of every subfolder is seen with its kind, a file larger than one
/// host read (64 KiB) is read to its end, a binary file and a link are passed over, and a
/// folder that cannot be listed answers in std's words.
#[test]
fn files_searches_walk_every_folder_and_read_every_text_file_whole() {
    let env = Env::new();
    let data = tempfile::tempdir().unwrap_or_else(|e| panic!("data dir: {e}"));
    let put = |path: &str, content: &[u8]| {
        let path = data.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))
            .unwrap_or_else(|e| panic!("mkdir: {e}"));
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    };
    put("a.txt", b"nothing here\n");
    put("sub/b.md", b"first\na needle in b\n");
    // 70,000 bytes of lines before the match: more than one host read.
    let mut long = format!("{}\n", "x".repeat(99)).repeat(700);
    long.push_str("the needle at the end\n");
    put("sub/deeper/c.txt", long.as_bytes());
    put("sub/deeper/bin.dat", b"needle\0binary");
    std::os::unix::fs::symlink(data.path().join("a.txt"), data.path().join("sub/link.txt"))
        .unwrap_or_else(|e| panic!("symlink: {e}"));
    let mut s = files_on_data(&env, data.path());

    let found = call(&mut s, "search_content", json!({ "path": "/data", "pattern": "needle" }));
    assert_eq!(
        found, "/data/sub/b.md:2: a needle in b\n/data/sub/deeper/c.txt:701: the needle at the end",
        "{found}"
    );
    let names = call(&mut s, "search_files", json!({ "path": "/data", "pattern": "*.*" }));
    assert_eq!(
        names,
        "/data/a.txt\n/data/sub/b.md\n/data/sub/link.txt\n/data/sub/deeper/bin.dat\n/data/sub/deeper/c.txt",
        "{names}"
    );
    let listing = call(&mut s, "list_directory", json!({ "path": "/data/sub" }));
    assert_eq!(listing, "[FILE] b.md\n[DIR] deeper\n[FILE] link.txt", "{listing}");
    let whole = call(&mut s, "read_text_file", json!({ "path": "/data/sub/deeper/c.txt" }));
    assert_eq!(whole.len(), long.trim_end().len(), "read whole");
    assert_eq!(
        call(&mut s, "list_directory", json!({ "path": "/data/none" })),
        "tool error: cannot list /data/none: no such file or folder"
    );
    assert!(s.quit().success());
}

/// The host lists a folder with each entry's kind from the listing itself (`dir_listing`) and
/// looks at a single name with one stat before opening it (`files_gate`): a big folder is still
/// listed whole, a link stays a link (never followed out or into a loop), and a FIFO, by its
/// own name, through a link or in a subfolder, is refused at once rather than waited on.
#[test]
fn files_lists_a_big_folder_whole_and_refuses_its_fifos_without_waiting() {
    let env = Env::new();
    let data = tempfile::tempdir().unwrap_or_else(|e| panic!("data dir: {e}"));
    let at = |name: &str| data.path().join(name);
    let names: Vec<String> = (0..3000).map(|i| format!("f{i:04}")).collect();
    for name in &names {
        std::fs::write(at(name), "").unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    std::fs::create_dir(at("sub")).unwrap_or_else(|e| panic!("sub: {e}"));
    for fifo in ["pipe", "sub/pipe"] {
        let made = std::process::Command::new("mkfifo").arg(at(fifo)).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {fifo}");
    }
    std::os::unix::fs::symlink(at("pipe"), at("pipelink")).unwrap_or_else(|e| panic!("symlink: {e}"));
    std::os::unix::fs::symlink(data.path(), at("sub/loop")).unwrap_or_else(|e| panic!("symlink: {e}"));
    let mut s = files_on_data(&env, data.path());

    let listing = call(&mut s, "list_directory", json!({ "path": "/data" }));
    let mut expected: Vec<String> = names.iter().take(1000).map(|n| format!("[FILE] {n}")).collect();
    expected.push("… and 2003 more entries".to_string());
    assert_eq!(listing, expected.join("\n"), "sorted, the first 1,000 of 3,003");
    let sub = call(&mut s, "list_directory", json!({ "path": "/data/sub" }));
    assert_eq!(sub, "[FILE] loop\n[FILE] pipe", "a link to a folder is not a folder");
    for (prefix, chunk) in ["f0", "f1", "f2"].iter().zip(names.chunks(1000)) {
        let found = call(
            &mut s,
            "search_files",
            json!({ "path": "/data", "pattern": format!("{prefix}*"), "maxResults": 1000 }),
        );
        let paths: Vec<&str> = found.lines().filter(|l| l.starts_with('/')).collect();
        let wanted: Vec<String> = chunk.iter().map(|n| format!("/data/{n}")).collect();
        assert!(paths == wanted, "every {prefix}* file once, in order: {} found", paths.len());
    }
    let everything = call(&mut s, "search_files", json!({ "path": "/data", "pattern": "*pipe*" }));
    assert_eq!(everything, "/data/pipe\n/data/pipelink\n/data/sub/pipe", "the link to the top is not walked");

    for fifo in ["/data/pipe", "/data/pipelink", "/data/sub/pipe"] {
        let refused = call(&mut s, "read_text_file", json!({ "path": fifo }));
        let words = format!("tool error: refused: cannot read {fifo}: not permitted by the sandbox");
        assert!(refused.starts_with(&words), "{refused}");
    }
    let searched = call(&mut s, "search_content", json!({ "path": "/data", "pattern": "anything" }));
    assert_eq!(searched, "No matches found", "FIFOs are not files to read");
    assert!(s.quit().success());
}

/// Answers every connection with one small HTTP response, until the test ends.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| panic!("addr: {e}"));
    std::thread::spawn(move || {
        for mut conn in listener.incoming().map_while(Result::ok) {
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request);
            let body = "hello from the granted server";
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn fetch_reaches_its_granted_host_only_and_the_host_records_the_refusal() {
    let env = Env::new();
    let granted = http_server();
    let other = http_server();
    write_setup(
        &env,
        json!({ "web": { "type": "wasm", "builtin": "fetch",
                          "grants": { "hosts": [format!("http://127.0.0.1:{granted}")] } } }),
        &["web"],
    );
    let mut s = Scripted::start(&env);
    let fetched = call(&mut s, "fetch", json!({ "url": format!("http://127.0.0.1:{granted}/page") }));
    assert!(fetched.contains("hello from the granted server"), "{fetched}");
    assert!(!fetched.starts_with("tool error"), "{fetched}");
    let status = s.run("/mcp");
    assert!(!status.contains("denied="), "{status}");

    let refused = call(&mut s, "fetch", json!({ "url": format!("http://127.0.0.1:{other}/") }));
    assert_eq!(refused, format!("tool error: not granted: http://127.0.0.1:{other}"));
    let status = s.run("/mcp");
    let row = status.lines().find(|l| l.starts_with("- web |")).unwrap_or_default();
    assert_eq!(
        row,
        format!(
            "- web | type=wasm | state=connected | workspace=enabled | paused=no | tools=1 | denied=not granted: http://127.0.0.1:{other}"
        )
    );
    // The refusal failed that call only.
    let again = call(&mut s, "fetch", json!({ "url": format!("http://127.0.0.1:{granted}/again") }));
    assert!(again.contains("hello from the granted server"), "{again}");
    assert!(s.quit().success());
}

/// The time limit is on computing, not on living: a server idle for longer than its `callMs`
/// (between calls, blocked waiting for input) is not stopped, and answers at once.
#[test]
fn an_idle_server_outlives_its_time_limit() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("dir: {e}"));
    std::fs::write(dir.path().join("a.txt"), "still here\n").unwrap_or_else(|e| panic!("a.txt: {e}"));
    write_setup(
        &env,
        json!({ "files": { "type": "wasm", "builtin": "files", "limits": { "callMs": 1000 },
                            "grants": { "dirs": [{ "host": dir.path(), "guest": "/d" }] } } }),
        &["files"],
    );
    let mut s = Scripted::start(&env);
    assert_eq!(call(&mut s, "read_text_file", json!({ "path": "/d/a.txt" })), "still here");
    std::thread::sleep(std::time::Duration::from_millis(3000));
    assert_eq!(call(&mut s, "read_text_file", json!({ "path": "/d/a.txt" })), "still here");
    let status = s.run("/mcp");
    assert!(status.contains("- files | type=wasm | state=connected"), "{status}");
    assert!(s.quit().success());
}
