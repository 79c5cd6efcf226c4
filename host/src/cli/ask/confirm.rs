//! toolport's own yes-or-no before a call the workspace's `confirm` names: the tool, its
//! server and the arguments (escaped, clipped by [`Confirmation`]), then `[y/N]` on stderr.
//! No is the default: Enter alone, a closed terminal or Esc send nothing.

use dialoguer::Confirm;
use dialoguer::console::Term;

use toolport::questions::{ConfirmAnswer, Confirmation};

/// Asks on the terminal; a prompt that fails (the terminal went away) cancels.
pub fn ask(request: &Confirmation) -> ConfirmAnswer {
    let term = Term::stderr();
    let asked = term
        .write_line(&format!("toolport asks before calling {}:", request.reason))
        .and_then(|()| term.write_line(&format!("  {}", request.subject())))
        .and_then(|()| term.write_line(&format!("  arguments: {}", request.arguments_shown())));
    let answer = asked
        .map_err(dialoguer::Error::from)
        .and_then(|()| Confirm::new().with_prompt("Allow this call?").default(false).interact_on_opt(&term));
    match answer {
        Ok(Some(true)) => ConfirmAnswer::Allow,
        Ok(Some(false)) => ConfirmAnswer::Decline,
        Ok(None) => ConfirmAnswer::Cancel,
        Err(e) => {
            tracing::warn!("cannot ask on the terminal: {e}");
            ConfirmAnswer::Cancel
        }
    }
}
