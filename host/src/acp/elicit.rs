//! Elicitation over ACP: an ACP client has no way yet to show a server's form to its person,
//! so every elicitation is declined, and the session says so in an agent message
//! (`session/update`), naming the server and what it asked, so the person is not left
//! guessing why a tool went on without their answer.
//!
//! Both modes are advertised: a server that never asked would hide the reason from the person.
//!
//! toolport's own question before a call the workspace's `confirm` names is another matter: ACP
//! has a request for exactly that, `session/request_permission` (`permission.rs`).

use futures::future::BoxFuture;

use std::sync::Arc;

use super::permission::{self, Requests};
use super::rpc::Outbox;
use crate::runtime::{
    ConfirmAnswer, Confirmation, Elicitation, ElicitationAnswer, ElicitationKind, ElicitationModes, Elicitor,
};
use crate::text::escape_line;

/// Declines every elicitation of one ACP session, with a note in that session; asks the
/// client's permission before a call toolport confirms.
pub struct DeclineWithNote {
    /// The session the note goes to.
    pub session_id: String,
    /// Where notifications to the client go.
    pub outbox: Outbox,
    /// The agent's requests to the client waiting for their responses.
    pub requests: Arc<Requests>,
}

impl Elicitor for DeclineWithNote {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::ALL
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, ElicitationAnswer> {
        tracing::info!(server = %request.server, "declined an elicitation: ACP clients cannot answer one yet");
        self.outbox.send(super::updates::message_chunk(&self.session_id, note(&request)));
        Box::pin(std::future::ready(ElicitationAnswer::Decline))
    }

    fn confirm(&self, request: Confirmation) -> BoxFuture<'_, ConfirmAnswer> {
        Box::pin(
            async move { permission::ask(&self.requests, &self.outbox, &self.session_id, &request).await },
        )
    }
}

/// The session's note: who asked, what, and why it was declined.
pub fn note(request: &Elicitation) -> String {
    let what = match &request.kind {
        ElicitationKind::Form(form) => format!("a form of {} fields", form.fields.len()),
        ElicitationKind::Url { url, .. } => format!("a visit to {}", escape_line(url)),
    };
    format!(
        "MCP server {} asked for input ({what}: {}); declined, because this ACP client cannot answer \
         elicitations yet.\n",
        escape_line(&request.server),
        escape_line(&request.message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_server_and_the_question() {
        let request = Elicitation {
            server: "everything".into(),
            message: "Your name?".into(),
            kind: ElicitationKind::Form(Default::default()),
            caller: None,
        };
        assert_eq!(
            note(&request),
            "MCP server everything asked for input (a form of 0 fields: Your name?); declined, because \
             this ACP client cannot answer elicitations yet.\n"
        );
    }
}
