//! deploy/: the Kubernetes example and the Helm chart, checked without a cluster. No package
//! registry these machines reach ships a Helm binary (Debian has none; PyPI's and npm's `helm`
//! packages are wrappers that want one), so the chart is not rendered by `helm template`:
//! every manifest and the templates' plain parts (template-only lines dropped, each `{{ … }}`
//! read as a placeholder) are parsed by a real YAML parser and checked for what a cluster would
//! trip on — the kinds, a Service selecting the Deployment's pods, the probes on serve's
//! `/healthz` and `/readyz` at the port `--http` listens on, a non-root pod — and every flag the
//! manifests and the Dockerfile pass exists in the built binary's `--help`. The `tools.lock` they
//! ship is served from a read-only `.toolport/` by a real serve over the real server it pins.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize as _;
use serde_json::{Value, json};

use crate::support::common::{Env, toolport};
use crate::support::immutable::Immutable;
use crate::support::operator::http_get;
use crate::support::peers::{install, node, peers};
use crate::support::runtime::write_config;
use crate::support::serve::{ServeHttp, StdioClient};

/// What stands for a template's `{{ … }}` once the template-only lines are gone.
const PLACEHOLDER: &str = "TEMPLATED";

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Every YAML document of `text` (from `file`), as JSON values.
fn documents(file: &str, text: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|e| panic!("{file} is not valid YAML: {e}")))
        .filter(|v| !v.is_null())
        .collect()
}

/// A Helm template's plain parts: lines that are only template actions dropped, and each
/// `{{ … }}` left inside a line replaced by [`PLACEHOLDER`].
fn plain(template: &str) -> String {
    let mut out = String::new();
    for line in template.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("{{") && trimmed.ends_with("}}") && trimmed.matches("{{").count() == 1 {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            out.push_str(PLACEHOLDER);
            rest = rest[open..].find("}}").map_or("", |close| &rest[open + close + 2..]);
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// The documents of every `*.yaml` in `dir`, each with its file name.
fn manifests(dir: &Path, template: bool) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let text = if template { plain(&read(&path)) } else { read(&path) };
        out.extend(documents(&name, &text).into_iter().map(|doc| (name.clone(), doc)));
    }
    out
}

fn of_kind<'a>(docs: &'a [(String, Value)], kind: &str) -> &'a Value {
    let found: Vec<&Value> = docs.iter().filter(|(_, d)| d["kind"] == kind).map(|(_, d)| d).collect();
    assert_eq!(found.len(), 1, "one {kind} expected, found {}", found.len());
    found[0]
}

/// Whether every label of `selector` is one of `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    selector.as_object().is_some_and(|s| !s.is_empty() && s.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// The checks a cluster would trip on, for the Kubernetes example and the chart alike; the
/// serve container's args.
fn check(docs: &[(String, Value)], what: &str) -> Vec<String> {
    let kinds: BTreeSet<&str> = docs.iter().filter_map(|(_, d)| d["kind"].as_str()).collect();
    assert_eq!(kinds, BTreeSet::from(["ConfigMap", "Deployment", "Service"]), "{what}");
    for (file, doc) in docs {
        assert!(doc["apiVersion"].is_string() && doc["metadata"]["name"].is_string(), "{what} {file}: {doc}");
    }
    let deployment = of_kind(docs, "Deployment");
    let service = of_kind(docs, "Service");
    let configmap = of_kind(docs, "ConfigMap");
    let pod = &deployment["spec"]["template"];
    let labels = &pod["metadata"]["labels"];
    assert!(
        selects(&deployment["spec"]["selector"]["matchLabels"], labels),
        "{what}: the Deployment's selector"
    );
    assert!(
        selects(&service["spec"]["selector"], labels),
        "{what}: the Service selects no pod of the Deployment"
    );

    let spec = &pod["spec"];
    assert_eq!(spec["securityContext"]["runAsNonRoot"], true, "{what}");
    assert!(spec["securityContext"]["runAsUser"].as_u64().is_some_and(|u| u > 0), "{what}");
    let Some([container]) = spec["containers"].as_array().map(Vec::as_slice) else {
        panic!("{what}: one container expected")
    };
    assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false, "{what}");
    let args: Vec<String> = container["args"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default();
    let at =
        args.iter().position(|a| a == "--http").unwrap_or_else(|| panic!("{what}: no --http in {args:?}"));
    let listen = args.get(at + 1).cloned().unwrap_or_default();
    let Some(port) = listen.strip_prefix("0.0.0.0:") else { panic!("{what}: --http {listen}") };
    let [ports] = container["ports"].as_array().map(Vec::as_slice).unwrap_or_default() else {
        panic!("{what}: one port expected")
    };
    assert_eq!(ports["name"], "http", "{what}");
    assert_eq!(
        ports["containerPort"].to_string().trim_matches('"'),
        port,
        "{what}: --http and containerPort"
    );
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "http", "{what}: the Service's targetPort");
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"], path, "{what} {probe}");
        assert_eq!(get["port"], "http", "{what} {probe}");
        assert_eq!(get["httpHeaders"], json!([{"name": "Host", "value": "localhost"}]), "{what} {probe}");
    }
    // The token and the session key come from a Secret, never from the manifest.
    let env = container["env"].as_array().cloned().unwrap_or_default();
    for var in ["TOOLPORT_TOKEN", "TOOLPORT_SESSION_KEY"] {
        let set = env.iter().find(|e| e["name"] == var || e["name"] == PLACEHOLDER);
        let set = set.unwrap_or_else(|| panic!("{what}: {var} is not set"));
        assert!(
            set["valueFrom"]["secretKeyRef"]["key"].is_string(),
            "{what}: {var} not from a Secret: {set}"
        );
        assert!(set.get("value").is_none(), "{what}: {var} written in the manifest");
    }
    let configmap_name = &configmap["metadata"]["name"];
    let volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
    assert!(
        volumes.iter().any(|v| &v["configMap"]["name"] == configmap_name),
        "{what}: the ConfigMap is not mounted"
    );
    for key in ["mcp.json", "workspace.json", "tools.lock"] {
        assert!(configmap["data"][key].is_string(), "{what}: the ConfigMap has no {key}");
    }
    // The pins are mounted beside the workspace file, where serve reads them.
    let workspace = volumes.iter().find(|v| {
        v["configMap"]["items"].as_array().is_some_and(|i| i.iter().any(|i| i["path"] == "workspace.json"))
    });
    let items = workspace.map(|v| v["configMap"]["items"].clone()).unwrap_or_default();
    assert!(
        items
            .as_array()
            .is_some_and(|i| i.iter().any(|i| i["key"] == "tools.lock" && i["path"] == "tools.lock")),
        "{what}: tools.lock is not mounted beside workspace.json: {items}"
    );
    args
}

/// The long flags `--help` of `args` lists.
fn flags_of(args: &[&str]) -> BTreeSet<String> {
    let out = toolport().args(args).arg("--help").output().unwrap_or_else(|e| panic!("toolport --help: {e}"));
    let help = String::from_utf8_lossy(&out.stdout);
    help.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()).to_string())
        .collect()
}

/// Every `--flag` of `args` exists: before `serve` in `toolport --help`, after it in
/// `toolport serve --help`.
fn assert_flags_exist(args: &[String], what: &str) {
    let global = flags_of(&[]);
    let serve = flags_of(&["serve"]);
    let at = args.iter().position(|a| a == "serve").unwrap_or(0);
    for (i, arg) in args.iter().enumerate().filter(|(_, a)| a.starts_with("--")) {
        let known = if i < at { &global } else { &serve };
        assert!(
            known.contains(arg.as_str()),
            "{what} passes {arg}, which `toolport {}--help` does not list",
            if i < at { "" } else { "serve " }
        );
    }
}

#[test]
fn the_kubernetes_example_is_valid_and_passes_only_flags_serve_has() {
    let docs = manifests(&deploy().join("kubernetes"), false);
    let args = check(&docs, "deploy/kubernetes");
    assert_eq!(of_kind(&docs, "Deployment")["spec"]["replicas"], 3);
    let container = &of_kind(&docs, "Deployment")["spec"]["template"]["spec"]["containers"][0];
    assert!(container["resources"]["requests"]["cpu"].is_string(), "resource requests");
    let configmap = of_kind(&docs, "ConfigMap");
    for key in ["mcp.json", "workspace.json"] {
        let text = configmap["data"][key].as_str().unwrap_or_default();
        serde_json::from_str::<Value>(text)
            .unwrap_or_else(|e| panic!("the ConfigMap's {key} is not JSON: {e}"));
    }
    assert_flags_exist(&args, "deploy/kubernetes/deployment.yaml");
}

#[test]
fn the_helm_chart_is_valid_and_passes_only_flags_serve_has() {
    let chart = deploy().join("helm/toolport");
    let meta = documents("Chart.yaml", &read(&chart.join("Chart.yaml")));
    assert_eq!(meta[0]["apiVersion"], "v2");
    assert_eq!(meta[0]["name"], "toolport");
    let values = documents("values.yaml", &read(&chart.join("values.yaml")));
    let values = &values[0];
    assert_eq!(values["replicas"], 3);
    assert!(values["resources"]["requests"]["cpu"].is_string(), "resource requests");
    for key in ["auth", "policy", "rateLimit", "sessionKey", "image"] {
        assert!(values.get(key).is_some(), "values.yaml has no {key}");
    }
    for rate in ["perCaller", "perTool"] {
        let rate = values["rateLimit"][rate].as_str().unwrap_or_default();
        assert!(
            rate.is_empty() || rate.parse::<toolport::serving::RateLimit>().is_ok(),
            "values.yaml: {rate}"
        );
    }
    let docs = manifests(&chart.join("templates"), true);
    check(&docs, "deploy/helm/toolport");
    // Every flag the template can pass, from every branch (the plain parts keep them all).
    let template = read(&chart.join("templates/deployment.yaml"));
    let args: Vec<String> = plain(&template)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|a| a.trim_matches('"').to_string())
        .filter(|a| a.starts_with("--") || a == "serve")
        .collect();
    assert!(args.iter().any(|a| a == "--rate-limit") && args.iter().any(|a| a == "--tool-rate-limit"));
    assert_flags_exist(&args, "deploy/helm/toolport/templates/deployment.yaml");
}

#[test]
fn the_dockerfile_runs_flags_serve_has() {
    let dockerfile = read(&deploy().join("Dockerfile"));
    let cmd = dockerfile.lines().find_map(|l| l.strip_prefix("CMD ")).unwrap_or_else(|| panic!("no CMD"));
    let cmd: Vec<String> =
        serde_json::from_str(cmd).unwrap_or_else(|e| panic!("CMD is not an exec form: {e}"));
    assert_eq!(cmd.first().map(String::as_str), Some("serve"));
    assert_flags_exist(&cmd, "deploy/Dockerfile");
}

/// The probes as the manifests send them (`Host: localhost`) pass serve's `Host` check; the
/// kubelet's own `Host` (the pod's IP) would not, which is why the manifests set it.
#[test]
fn the_probes_as_the_manifests_send_them_reach_serve() {
    let env = Env::new();
    write_config(&env, json!({}), &[], json!({}));
    let serve = ServeHttp::start(&env);
    let authority = serve.authority();
    let Some((_, port)) = authority.rsplit_once(':') else { panic!("{authority}") };
    for path in ["/healthz", "/readyz"] {
        let got = http_get(&authority, path, &[("Host", "localhost")]);
        assert_eq!(got.status, 200, "{path} with Host: localhost: {}{}", got.head, got.body);
        let pod_ip = format!("10.1.2.3:{port}");
        let got = http_get(&authority, path, &[("Host", pod_ip.as_str())]);
        assert_eq!(got.status, 403, "{path} with the kubelet's Host: {}{}", got.head, got.body);
    }
}

/// The Kubernetes example's `mcp.json`, `workspace.json` and `tools.lock`, in a workspace whose
/// `.toolport/` is read-only as in the pod, the memory server run from the tests' peers (the
/// version the store pins, not fetched by `npx`): serve starts without `--allow-unpinned` and
/// lists every tool the lock pins, none held. The chart ships the same lock and workspace.
#[test]
fn the_shipped_tools_lock_pins_every_tool_of_the_shipped_server() {
    let docs = manifests(&deploy().join("kubernetes"), false);
    let data = &of_kind(&docs, "ConfigMap")["data"];
    let json_of = |key: &str| -> Value {
        serde_json::from_str(data[key].as_str().unwrap_or_default()).unwrap_or_else(|e| panic!("{key}: {e}"))
    };
    let (store, workspace, lock) = (json_of("mcp.json"), json_of("workspace.json"), json_of("tools.lock"));
    assert_eq!(workspace["trust"], "strict", "a read-only lock records nothing: {workspace}");
    let chart = deploy().join("helm/toolport");
    let chart_lock: Value = serde_json::from_str(&read(&chart.join("files/tools.lock")))
        .unwrap_or_else(|e| panic!("files/tools.lock: {e}"));
    assert_eq!(chart_lock, lock, "the chart ships the example's lock");
    let values = &documents("values.yaml", &read(&chart.join("values.yaml")))[0];
    assert_eq!(values["store"], store, "the chart's store is the example's");
    assert_eq!(values["workspace"], workspace, "the chart's workspace is the example's");

    static MEMORY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    install("peers/install_memory.sh", &MEMORY);
    let package = peers().join("node_modules/@modelcontextprotocol/server-memory");
    let version: Value = serde_json::from_str(&read(&package.join("package.json"))).unwrap_or_default();
    let args = &store["mcpServers"]["memory"]["args"];
    let pinned =
        format!("@modelcontextprotocol/server-memory@{}", version["version"].as_str().unwrap_or("?"));
    assert_eq!(args, &json!(["-y", pinned]), "the store pins the version the lock was made of");

    let env = Env::new();
    let memory = json!({"type": "stdio", "command": node(), "args": [package.join("dist/index.js")],
                        "env": {"MEMORY_FILE_PATH": env.home().join("memory.jsonl")}});
    write_config(&env, json!({"memory": memory}), &[], json!({}));
    let folder = env.root().join(".toolport");
    std::fs::write(folder.join("workspace.json"), workspace.to_string()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(folder.join("tools.lock"), data["tools.lock"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let _frozen = Immutable::new(&folder);
    let mut client = StdioClient::start(&env, &[]);
    let mut served = client.tool_names();
    served.sort();
    let pinned: Vec<String> = lock["servers"]["memory"]["tools"]
        .as_object()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    assert!(!pinned.is_empty(), "{lock}");
    assert_eq!(served, pinned, "every pinned tool is served, none held");
}
