//! Answering a server's elicitation for the person at a terminal, or by a script's policy when
//! there is none: what `toolport call` and the session hand the runtime as its [`Elicitor`].
//! `form.rs` asks a form field by field (dialoguer, on stderr, so stdout keeps only results);
//! `url.rs` shows the page and opens it with `$BROWSER`.
//!
//! Without a terminal nobody can answer, so the answer is `decline` unless the policy says
//! otherwise (`--elicit accept-defaults`); either way a line on stderr says what was asked
//! and what was answered, so a script's log explains a declined call.
//!
//! toolport's own question before a call the workspace's `confirm` names is a `[y/N]`
//! (`confirm.rs`). Without a terminal it is declined, whatever `--elicit` says: answering a
//! server's form with its defaults is not allowing a destructive call. Only an explicit
//! opt-in allows it unasked (`call --yes`, [`TerminalElicitor::allowing_calls`]).

mod confirm;
mod form;
mod url;

use std::io::IsTerminal as _;

use futures::future::BoxFuture;

use toolport::display::escape_line;
use toolport::questions::{
    ConfirmAnswer, Confirmation, Elicitation, ElicitationAnswer, ElicitationKind, ElicitationModes, Elicitor,
};

/// How a terminal host answers (`toolport call --elicit …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ElicitPolicy {
    /// Ask the person on the terminal; decline when there is none.
    #[default]
    Ask,
    /// Answer every form with its schema defaults (declining a form whose required fields
    /// have none) and accept every URL, printing it and opening it with `$BROWSER`.
    AcceptDefaults,
    /// Decline everything.
    Decline,
}

/// An [`Elicitor`] for a person at this process's terminal.
pub struct TerminalElicitor {
    policy: ElicitPolicy,
    /// Calls the workspace's `confirm` names are allowed without asking (`call --yes`).
    allow_calls: bool,
    /// One question at a time: two servers asking at once take turns at the one terminal.
    turn: tokio::sync::Mutex<()>,
}

impl TerminalElicitor {
    /// Answers by `policy`.
    pub fn new(policy: ElicitPolicy) -> Self {
        Self { policy, allow_calls: false, turn: tokio::sync::Mutex::new(()) }
    }

    /// Allows, without asking, the calls the workspace's `confirm` would ask about: a
    /// script's explicit opt-in (`call --yes`). Each is still said on stderr and recorded.
    pub fn allowing_calls(mut self) -> Self {
        self.allow_calls = true;
        self
    }

    async fn confirm_call(&self, request: Confirmation) -> ConfirmAnswer {
        let _turn = self.turn.lock().await;
        let subject = request.subject();
        if self.allow_calls {
            note(&format!("allowed the call of {subject} without asking (--yes)"));
            return ConfirmAnswer::Allow;
        }
        if self.policy == ElicitPolicy::Decline {
            note(&format!("declined the call of {subject} (--elicit decline)"));
            return ConfirmAnswer::Decline;
        }
        if !on_a_terminal() {
            return ConfirmAnswer::Unasked(
                "there is no terminal to ask on (toolport call --yes allows it without asking)".into(),
            );
        }
        let asked = tokio::task::spawn_blocking(move || confirm::ask(&request)).await;
        asked.unwrap_or_else(|e| {
            tracing::warn!("the terminal prompt ended abnormally: {e}");
            ConfirmAnswer::Cancel
        })
    }

    async fn answer(&self, request: Elicitation) -> ElicitationAnswer {
        let _turn = self.turn.lock().await;
        let server = escape_line(&request.server).into_owned();
        match self.policy {
            ElicitPolicy::Decline => {
                note(&format!("declined the input MCP server {server} asked for (--elicit decline)"));
                ElicitationAnswer::Decline
            }
            ElicitPolicy::AcceptDefaults => accept_defaults(&server, &request),
            ElicitPolicy::Ask if !on_a_terminal() => {
                if let ElicitationKind::Url { url, .. } = &request.kind {
                    url::show(&server, &request.message, url);
                }
                note(&format!(
                    "MCP server {server} asks for input, but there is no terminal to ask on: declined \
                     (--elicit accept-defaults answers with the defaults)"
                ));
                ElicitationAnswer::Decline
            }
            ElicitPolicy::Ask => {
                let asked = tokio::task::spawn_blocking(move || match &request.kind {
                    ElicitationKind::Form(fields) => form::ask(&server, &request.message, fields),
                    ElicitationKind::Url { url, .. } => url::ask(&server, &request.message, url),
                })
                .await;
                asked.unwrap_or_else(|e| {
                    tracing::warn!("the terminal prompt ended abnormally: {e}");
                    ElicitationAnswer::Cancel
                })
            }
        }
    }
}

impl Elicitor for TerminalElicitor {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::ALL
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, ElicitationAnswer> {
        Box::pin(self.answer(request))
    }

    fn confirm(&self, request: Confirmation) -> BoxFuture<'_, ConfirmAnswer> {
        Box::pin(self.confirm_call(request))
    }
}

/// `--elicit accept-defaults`: a form's defaults, or decline when a required field has none
/// (an answer must satisfy the schema, and there is nobody to fill that field in).
fn accept_defaults(server: &str, request: &Elicitation) -> ElicitationAnswer {
    match &request.kind {
        ElicitationKind::Form(form) => {
            let answers = form.defaults();
            let missing = form.missing_required(&answers);
            if missing.is_empty() {
                note(&format!(
                    "answered MCP server {server} with the form's defaults (--elicit accept-defaults)"
                ));
                ElicitationAnswer::Accept(answers)
            } else {
                note(&format!(
                    "declined the input MCP server {server} asked for: required {} no default \
                     (--elicit accept-defaults)",
                    match missing.as_slice() {
                        [one] => format!("field {} has", escape_line(one)),
                        many => format!(
                            "fields {} have",
                            many.iter().map(|m| escape_line(m).into_owned()).collect::<Vec<_>>().join(", ")
                        ),
                    }
                ));
                ElicitationAnswer::Decline
            }
        }
        ElicitationKind::Url { url, .. } => {
            url::show(server, &request.message, url);
            url::open(url);
            ElicitationAnswer::Accept(Default::default())
        }
    }
}

/// Both ends a prompt needs: keys from stdin, drawing on stderr.
fn on_a_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// One line for the person or the script's log, on stderr.
fn note(line: &str) {
    eprintln!("toolport: {line}");
}
