//! Elicitation: a server asks the person for something, with `elicitation/create` (2025-11-25)
//! or an elicitation input request of an input-required result (SEP-2322). The runtime talks to
//! no one itself: the embedding host supplies an [`Elicitor`] (a terminal, an ACP client, a
//! script's policy). This file is the form such a host asks from and its answer; reading them
//! out of rmcp's wire types and back is `elicitation_wire.rs`'s. Pure: no I/O.
//!
//! The form keeps what a person needs field by field: the label, the description, whether it
//! is required, the SEP-1034 default and the SEP-1330 choices (titled or not, single or
//! multiple, and the legacy `enumNames`), in the order the server wrote them.

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::confirmation::{ConfirmAnswer, Confirmation};

/// What the embedding host answers when a server asks the person something. The runtime
/// calls it for every elicitation of every server, possibly concurrently; an implementation
/// that asks one person serialises the questions itself.
pub trait Elicitor: Send + Sync + 'static {
    /// The modes this host can answer, advertised to servers as the `elicitation` capability
    /// (a server asks only in the modes it was told of).
    fn modes(&self) -> ElicitationModes;

    /// Asks; resolves once the person (or the host's policy) has answered. Time spent here
    /// does not count against the call's timeout.
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, ElicitationAnswer>;

    /// Asks the person to allow a call before toolport sends it (the workspace's `confirm`).
    /// By default a form without fields whose message is the question, put
    /// through [`Elicitor::elicit`]: accepting it allows the call. A host with a plainer way to
    /// ask yes or no (a terminal, ACP's permission request) answers it its own way.
    fn confirm(&self, request: Confirmation) -> BoxFuture<'_, ConfirmAnswer> {
        let asked = confirm_form(&request);
        Box::pin(async move { ConfirmAnswer::from(self.elicit(asked).await) })
    }
}

/// The question of `request` as a form elicitation: no fields, the question as the message,
/// under the tool's server (so a host that routes questions by call reaches the caller), but
/// worded as toolport's own.
pub fn confirm_form(request: &Confirmation) -> Elicitation {
    let mut schema = Map::new();
    schema.insert("type".into(), Value::String("object".into()));
    schema.insert("properties".into(), Value::Object(Map::new()));
    Elicitation {
        server: request.server.clone(),
        message: request.question(),
        kind: ElicitationKind::Form(Form { fields: Vec::new(), schema }),
        caller: request.caller,
    }
}

impl From<ElicitationAnswer> for ConfirmAnswer {
    fn from(answer: ElicitationAnswer) -> Self {
        match answer {
            ElicitationAnswer::Accept(_) => Self::Allow,
            ElicitationAnswer::Decline => Self::Decline,
            ElicitationAnswer::Cancel => Self::Cancel,
        }
    }
}

/// Which elicitation modes a host answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElicitationModes {
    /// Form mode: fields asked and answered in place.
    pub form: bool,
    /// URL mode: the person is sent to a web page.
    pub url: bool,
}

impl ElicitationModes {
    /// Both modes.
    pub const ALL: ElicitationModes = ElicitationModes { form: true, url: true };
}

/// The host that asks no one: advertises no elicitation and declines whatever arrives anyway.
/// What [`crate::RuntimeOptions`] uses when the host supplies nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeclineAll;

impl Elicitor for DeclineAll {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::default()
    }

    fn elicit(&self, _request: Elicitation) -> BoxFuture<'_, ElicitationAnswer> {
        Box::pin(std::future::ready(ElicitationAnswer::Decline))
    }

    fn confirm(&self, _request: Confirmation) -> BoxFuture<'_, ConfirmAnswer> {
        Box::pin(std::future::ready(ConfirmAnswer::Unasked("this host has no one to ask".into())))
    }
}

/// One question of one server.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// The server that asks (its configured name).
    pub server: String,
    /// The server's message to the person (its own text: escape it before printing).
    pub message: String,
    /// A form to fill, or a page to visit.
    pub kind: ElicitationKind,
    /// Whose call the question came during, when the host named its callers and it is known
    /// (`related`): a host with several clients asks that one, or declines.
    pub caller: Option<super::related::Caller>,
}

/// What the server asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationKind {
    /// Fields to fill in place.
    Form(Form),
    /// A page the person opens in a browser; nothing comes back but the decision.
    Url {
        /// The page (the server's text).
        url: String,
        /// The server's id for this elicitation (empty on 2026-07-28, which dropped it).
        id: String,
    },
}

/// The fields of a form, in the server's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Form {
    /// Every field.
    pub fields: Vec<Field>,
    /// The requested schema as the server sent it: what a host that passes the question on to
    /// its own client (`toolport serve`) forwards instead of the fields.
    pub schema: Map<String, Value>,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name the answer uses.
    pub name: String,
    /// The schema's `title`, if any.
    pub title: Option<String>,
    /// The schema's `description`, if any.
    pub description: Option<String>,
    /// Listed in the schema's `required`.
    pub required: bool,
    /// The value's type, its limits and its default.
    pub kind: FieldKind,
}

/// A field's type with its limits and its SEP-1034 default.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A string, optionally of a `format` (`email`, `uri`, `date`, `date-time`).
    Text {
        /// The default.
        default: Option<String>,
        /// The format's name, as the schema spells it.
        format: Option<String>,
        /// Fewest characters.
        min_length: Option<u32>,
        /// Most characters.
        max_length: Option<u32>,
    },
    /// A number.
    Number {
        /// The default.
        default: Option<f64>,
        /// Inclusive lower bound.
        minimum: Option<f64>,
        /// Inclusive upper bound.
        maximum: Option<f64>,
    },
    /// An integer.
    Integer {
        /// The default.
        default: Option<i64>,
        /// Inclusive lower bound.
        minimum: Option<i64>,
        /// Inclusive upper bound.
        maximum: Option<i64>,
    },
    /// Yes or no.
    Boolean {
        /// The default.
        default: Option<bool>,
    },
    /// One of a list (SEP-1330 single select, titled or not, or the legacy `enumNames`).
    Choice {
        /// The options, in order.
        options: Vec<Choice>,
        /// The default option's value.
        default: Option<String>,
    },
    /// Any number of a list (SEP-1330 multi select).
    Choices {
        /// The options, in order.
        options: Vec<Choice>,
        /// The values chosen by default.
        default: Option<Vec<String>>,
        /// Fewest to choose.
        min_items: Option<u64>,
        /// Most to choose.
        max_items: Option<u64>,
    },
}

/// One option of a choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What the answer carries.
    pub value: String,
    /// What the person reads (the title, else the value).
    pub label: String,
}

/// The person's decision.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Answered: the fields given (a URL elicitation carries none). Fields left out are filled
    /// from their schema defaults before the answer is sent (SEP-1034).
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed without deciding.
    Cancel,
}

impl Field {
    /// The title, else the property name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// The schema default as the JSON value an answer would carry.
    pub fn default_value(&self) -> Option<Value> {
        match &self.kind {
            FieldKind::Text { default, .. } => default.clone().map(Value::String),
            FieldKind::Number { default, .. } => {
                default.and_then(serde_json::Number::from_f64).map(Value::Number)
            }
            FieldKind::Integer { default, .. } => default.map(Value::from),
            FieldKind::Boolean { default } => default.map(Value::Bool),
            FieldKind::Choice { default, .. } => default.clone().map(Value::String),
            FieldKind::Choices { default, .. } => default.clone().map(Value::from),
        }
    }
}

impl Form {
    /// Every field that has a default, at its default: the answer of `--elicit accept-defaults`.
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields.iter().filter_map(|f| Some((f.name.clone(), f.default_value()?))).collect()
    }

    /// `answers` with every field it leaves out filled from its default (SEP-1034).
    pub fn with_defaults(&self, mut answers: Map<String, Value>) -> Map<String, Value> {
        for (name, value) in self.defaults() {
            answers.entry(name).or_insert(value);
        }
        answers
    }

    /// The required fields `answers` does not give, in form order.
    pub fn missing_required<'a>(&'a self, answers: &Map<String, Value>) -> Vec<&'a str> {
        self.fields
            .iter()
            .filter(|f| f.required && !answers.contains_key(&f.name))
            .map(|f| f.name.as_str())
            .collect()
    }
}
