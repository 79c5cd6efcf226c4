//! Bundles (issue 30): the workspace's `bundles` served at `/mcp/<bundle>` beside the whole
//! surface at `/mcp`, so one gateway appears to a client as several servers. Each bundle's
//! lists are read by the Python SDK's default `mcp.Client`; a call outside a bundle is refused
//! as an unknown tool; an unknown bundle is 404; a bad bundle is a config error (exit 2).
//! `/mcp/<bundle>/` is `/mcp/<bundle>`.

use serde_json::json;

use super::policy::{access_client, call_text, strings, two_servers};
use crate::support::common::Env;
use crate::support::operator::http_get;
use crate::support::serve::ServeHttp;

#[test]
fn two_bundles_list_only_their_servers_filtered_tools_and_refuse_the_rest() {
    let env = Env::new();
    let bundles = json!({"bundles": {
        "docs": {"servers": ["docs"], "tools": {"include": ["get-*", "echo"], "exclude": ["get-env"]}},
        "demo": {"servers": ["demo"], "tools": {"exclude": ["demo_sleep"]}},
    }});
    two_servers(&env, bundles);
    let serve = ServeHttp::start(&env);
    let whole = access_client(&serve.url, None, &[]);
    let docs =
        access_client(&format!("{}/docs", serve.url), None, &["--call", "demo_echo={\"message\": \"x\"}"]);
    let demo = access_client(
        &format!("{}/demo", serve.url),
        None,
        &["--call", "demo_echo={\"message\": \"in\"}", "--call", "echo={\"message\": \"out\"}"],
    );

    let all = strings(&whole, "tools");
    assert!(all.contains(&"demo_sleep".to_string()) && all.contains(&"echo".to_string()), "{all:?}");
    // docs: server-everything's tools the filter keeps, and its resources and prompts only.
    let expected: Vec<String> = all
        .iter()
        .filter(|t| !t.starts_with("demo_") && (t.starts_with("get-") || *t == "echo") && *t != "get-env")
        .cloned()
        .collect();
    assert!(expected.len() >= 2, "{expected:?}");
    assert_eq!(strings(&docs, "tools"), expected);
    let docs_resources = strings(&docs, "resources");
    assert!(
        !docs_resources.is_empty() && docs_resources.iter().all(|r| !r.starts_with("demo://item/")),
        "{docs}"
    );
    assert_eq!(strings(&docs, "prompts"), strings(&whole, "prompts"), "the demo server has no prompt");
    // demo: the demo server's tools but `demo_sleep`, its two resources, no prompt.
    let expected: Vec<String> =
        all.iter().filter(|t| t.starts_with("demo_") && *t != "demo_sleep").cloned().collect();
    assert_eq!(strings(&demo, "tools"), expected);
    assert_eq!(strings(&demo, "resources"), ["demo://item/1", "demo://item/2"]);
    assert_eq!(strings(&demo, "prompts"), Vec::<String>::new());
    assert_eq!(strings(&demo, "templates"), Vec::<String>::new());

    // Inside its bundle a call goes through; outside it is an unknown tool.
    assert_eq!(call_text(&demo, "demo_echo"), "is_error=false in");
    let outside = call_text(&demo, "echo");
    assert!(outside.starts_with("is_error=true ") && outside.contains("echo"), "{outside}");
    assert!(call_text(&docs, "demo_echo").starts_with("is_error=true "), "{docs}");

    // A bundle the workspace does not declare is 404, before any MCP.
    let authority = serve.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let got = http_get(&authority, "/mcp/nope", &[]);
    assert_eq!(got.status, 404, "{}", got.head);
    // The body as sent, inside its chunked framing.
    let said = "no bundle \"nope\" in this workspace: serve it by adding it to \"bundles\" in .toolport/workspace.json\n";
    assert!(got.body.contains(said), "{}", got.body);

    // A trailing slash is the same bundle (issue 44 item 11), and an unknown one still gets the hint.
    let slashed =
        access_client(&format!("{}/demo/", serve.url), None, &["--call", "echo={\"message\": \"out\"}"]);
    assert_eq!(strings(&slashed, "tools"), strings(&demo, "tools"));
    assert!(call_text(&slashed, "echo").starts_with("is_error=true "), "{slashed}");
    let got = http_get(&authority, "/mcp/nope/", &[]);
    assert_eq!(got.status, 404, "{}", got.head);
    assert!(got.body.contains(said), "{}", got.body);
}

#[test]
fn a_bad_bundle_is_a_config_error_naming_the_file_and_key() {
    let env = Env::new();
    two_servers(&env, json!({"bundles": {"docs": {"servers": ["docs"], "tools": {"include": ["[a"]}}}}));
    let (code, _, err) = env.run(&["serve", "--http", "127.0.0.1:0"], std::time::Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        format!(
            "toolport: {}: bundle \"docs\": \"tools.include\" has a bad glob \"[a\": unclosed character class; missing ']'\n",
            env.workspace_file().display()
        )
    );
}
