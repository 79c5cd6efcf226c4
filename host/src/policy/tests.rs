use super::*;

/// Group `docs` may call only the docs server's read-only tools; `admin` may do anything but
/// call a destructive tool; nobody lists `demo/secret`.
const POLICY: &str = r#"
@id("docs-read-only")
permit(principal in Group::"docs", action == Action::"call", resource in Server::"docs")
when { resource.annotations has readOnlyHint && resource.annotations.readOnlyHint };

@id("docs-read")
permit(principal in Group::"docs", action == Action::"read", resource in Server::"docs");

permit(principal in Group::"admin", action, resource);

@id("no-destructive")
forbid(principal, action == Action::"call", resource)
when { resource.annotations has destructiveHint && resource.annotations.destructiveHint };

@id("hide-secret")
forbid(principal, action == Action::"list", resource == Tool::"demo/secret");
"#;

fn policy() -> Policy {
    Policy::parse(Path::new("/home/policy.cedar"), POLICY).unwrap_or_else(|e| panic!("{e}"))
}

fn user(groups: &[&str]) -> Principal {
    Principal { subject: "u".into(), groups: groups.iter().map(|g| g.to_string()).collect(), client_id: None }
}

fn tool<'a>(server: &'a str, name: &'a str, read_only: Option<bool>) -> Target<'a> {
    Target::Tool { server, name, hints: Hints { read_only, ..Hints::default() } }
}

#[test]
fn group_docs_calls_only_the_docs_servers_read_only_tools() {
    let (p, docs) = (policy(), user(&["docs"]));
    let call = |t: &Target<'_>| p.decide(&docs, Action::Call, t);
    let allowed = call(&tool("docs", "read_page", Some(true)));
    assert_eq!((allowed.allowed, allowed.policies.clone()), (true, vec!["docs-read-only".to_string()]));
    assert_eq!(allowed.explain(), "allow: permitted by docs-read-only");
    // Not read-only, no hint at all (the policy's `has` keeps it from erring), another server.
    assert!(!call(&tool("docs", "write_page", Some(false))).allowed);
    let unhinted = call(&tool("docs", "write_page", None));
    assert_eq!((unhinted.allowed, unhinted.errors.len()), (false, 0));
    let elsewhere = call(&tool("demo", "echo", Some(true)));
    assert_eq!(elsewhere.explain(), "deny: no policy permits it (deny by default)");
    assert!(p.decide(&docs, Action::Read, &Target::Resource { server: "docs", uri: "docs://a" }).allowed);
    assert!(!p.decide(&docs, Action::Prompt, &Target::Prompt { server: "docs", name: "p" }).allowed);
}

#[test]
fn a_forbid_wins_and_is_named() {
    let (p, admin) = (policy(), user(&["admin"]));
    let hints = Hints { destructive: Some(true), ..Hints::default() };
    let denied = p.decide(&admin, Action::Call, &Target::Tool { server: "demo", name: "rm", hints });
    assert_eq!(denied.explain(), "deny: forbidden by no-destructive");
    let allowed = p.decide(&admin, Action::Call, &tool("demo", "echo", None));
    assert_eq!(allowed.explain(), "allow: permitted by policy2");
}

#[test]
fn listing_needs_the_use_and_no_forbid_on_list() {
    let p = policy();
    let (admin, docs, nobody) = (user(&["admin"]), user(&["docs"]), Principal::anonymous());
    assert!(p.decide(&admin, Action::List, &tool("demo", "echo", None)).allowed);
    let hidden = p.decide(&admin, Action::List, &tool("demo", "secret", None));
    assert_eq!(hidden.explain(), "deny: forbidden by hide-secret");
    // Callable, hidden from lists: the use is still allowed.
    assert!(p.decide(&admin, Action::Call, &tool("demo", "secret", None)).allowed);
    assert!(p.decide(&docs, Action::List, &tool("docs", "read_page", Some(true))).allowed);
    assert!(!p.decide(&docs, Action::List, &tool("docs", "write_page", Some(false))).allowed);
    assert!(!p.decide(&nobody, Action::List, &tool("docs", "read_page", Some(true))).allowed);
}

#[test]
fn the_principal_has_its_client_id_and_anonymous_has_no_group() {
    let text = r#"permit(principal, action, resource) when { principal has client_id && principal.client_id == "ci" };
                  permit(principal == User::"anonymous", action == Action::"read", resource);"#;
    let p = Policy::parse(Path::new("p.cedar"), text).unwrap_or_else(|e| panic!("{e}"));
    let mut ci = user(&[]);
    ci.client_id = Some("ci".into());
    assert!(p.decide(&ci, Action::Call, &tool("a", "b", None)).allowed);
    assert!(!p.decide(&user(&[]), Action::Call, &tool("a", "b", None)).allowed);
    let resource = Target::Resource { server: "a", uri: "a://x" };
    assert!(p.decide(&Principal::anonymous(), Action::Read, &resource).allowed);
}

#[test]
fn a_parse_error_names_the_file_line_and_column() {
    let text = "permit(principal, action, resource);\n\npermit(principal, action resource);\n";
    let err = Policy::parse(Path::new("/h/policy.cedar"), text).err().map(|e| e.0).unwrap_or_default();
    assert!(err.starts_with("/h/policy.cedar:3:26: unexpected token `resource`"), "{err}");
    let err = Policy::load(Path::new("/nonexistent/policy.cedar")).err().map(|e| e.0).unwrap_or_default();
    assert!(err.starts_with("cannot read the policy file /nonexistent/policy.cedar: "), "{err}");
}

#[test]
fn hints_are_set_by_name() {
    let mut hints = Hints::default();
    assert!(hints.set("readOnlyHint", true) && hints.set("openWorldHint", false));
    assert!(!hints.set("other", true));
    assert_eq!(hints.given().collect::<Vec<_>>(), [("readOnlyHint", true), ("openWorldHint", false)]);
    assert_eq!(Action::parse("prompt"), Some(Action::Prompt));
    assert_eq!(Action::parse("get"), None);
}

#[test]
fn operate_is_decided_on_the_endpoint_and_nothing_else_grants_it() {
    let text = r#"@id("ops") permit(principal in Group::"ops", action == Action::"operate", resource == Endpoint::"/status");
                  @id("callers") permit(principal, action == Action::"call", resource);"#;
    let p = Policy::parse(Path::new("p.cedar"), text).unwrap_or_else(|e| panic!("{e}"));
    let status = Target::Endpoint { path: "/status" };
    let ops = p.decide(&user(&["ops"]), Action::Operate, &status);
    assert_eq!(ops.explain(), "allow: permitted by ops");
    assert_eq!(status.describe(), "Endpoint::\"/status\"");
    assert_eq!(status.use_action(), Action::Operate);
    // Calling anything is not operating; nor is operating one endpoint another.
    let caller = p.decide(&user(&["docs"]), Action::Operate, &status);
    assert_eq!(caller.explain(), "deny: no policy permits it (deny by default)");
    assert!(!p.decide(&user(&["ops"]), Action::Operate, &Target::Endpoint { path: "/metrics" }).allowed);
    // `operate` parses, so `policy check --action operate` can ask it.
    assert_eq!(Action::parse("operate"), Some(Action::Operate));
}
