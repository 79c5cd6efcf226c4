//! Elicitation: a server asks the person for something, with `elicitation/create` (2025-11-25)
//! or an elicitation input request of an input-required result (SEP-2322). The runtime talks to
//! no one itself: the embedding host supplies an [`Elicitor`] (a terminal, an ACP client, a
//! script's policy). This file is the form such a host asks from, read out of rmcp's wire
//! types, and the answer written back into them. Pure: no I/O.
//!
//! The form keeps what a person needs field by field: the label, the description, whether it
//! is required, the SEP-1034 default and the SEP-1330 choices (titled or not, single or
//! multiple, and the legacy `enumNames`), in the order the server wrote them.

use futures::future::BoxFuture;
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema,
    MultiSelectEnumSchema, PrimitiveSchemaDefinition, SingleSelectEnumSchema, StringFormat,
};
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
    /// By default a form without fields whose message is the question ([`confirm_form`]), put
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

/// rmcp's request as the form a host asks from; `None` for a mode a later rmcp adds.
pub(crate) fn from_params(server: &str, params: ElicitRequestParams) -> Option<Elicitation> {
    let (message, kind) = match params {
        ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
            (message, ElicitationKind::Form(form(&requested_schema)))
        }
        ElicitRequestParams::UrlElicitationParams { message, url, elicitation_id, .. } => {
            (message, ElicitationKind::Url { url, id: elicitation_id })
        }
        _ => return None,
    };
    Some(Elicitation { server: server.to_string(), message, kind, caller: None })
}

/// The answer as rmcp's result; an accepted form gets its left-out fields' defaults.
pub(crate) fn to_result(answer: ElicitationAnswer, kind: &ElicitationKind) -> ElicitResult {
    match (answer, kind) {
        (ElicitationAnswer::Accept(answers), ElicitationKind::Form(form)) => {
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(Value::Object(form.with_defaults(answers)))
        }
        (ElicitationAnswer::Accept(_), ElicitationKind::Url { .. }) => {
            ElicitResult::new(ElicitationAction::Accept)
        }
        (ElicitationAnswer::Decline, _) => ElicitResult::new(ElicitationAction::Decline),
        (ElicitationAnswer::Cancel, _) => ElicitResult::new(ElicitationAction::Cancel),
    }
}

fn form(schema: &ElicitationSchema) -> Form {
    let required = schema.required.clone().unwrap_or_default();
    // The wire order when rmcp kept it, then anything it did not list.
    let mut names: Vec<&String> = schema.property_order.iter().flatten().collect();
    names.extend(schema.properties.keys().filter(|k| !names.contains(k)).collect::<Vec<_>>());
    let fields = names
        .into_iter()
        .filter_map(|name| {
            let definition = schema.properties.get(name)?;
            let (title, description, kind) = field(definition);
            Some(Field { name: name.clone(), title, description, required: required.contains(name), kind })
        })
        .collect();
    let schema = match serde_json::to_value(schema) {
        Ok(Value::Object(schema)) => schema,
        _ => Map::new(),
    };
    Form { fields, schema }
}

type Described = (Option<String>, Option<String>, FieldKind);

fn field(definition: &PrimitiveSchemaDefinition) -> Described {
    let text = |t: &Option<std::borrow::Cow<'static, str>>| t.as_deref().map(str::to_string);
    match definition {
        PrimitiveSchemaDefinition::String(s) => (
            text(&s.title),
            text(&s.description),
            FieldKind::Text {
                default: s.default.clone(),
                format: s.format.map(format_name),
                min_length: s.min_length,
                max_length: s.max_length,
            },
        ),
        PrimitiveSchemaDefinition::Number(n) => (
            text(&n.title),
            text(&n.description),
            FieldKind::Number { default: n.default, minimum: n.minimum, maximum: n.maximum },
        ),
        PrimitiveSchemaDefinition::Integer(i) => (
            text(&i.title),
            text(&i.description),
            FieldKind::Integer { default: i.default, minimum: i.minimum, maximum: i.maximum },
        ),
        PrimitiveSchemaDefinition::Boolean(b) => {
            (text(&b.title), text(&b.description), FieldKind::Boolean { default: b.default })
        }
        PrimitiveSchemaDefinition::Enum(e) => choice(e),
        // A kind a later rmcp adds: asked as plain text, which the server then checks.
        _ => {
            (None, None, FieldKind::Text { default: None, format: None, min_length: None, max_length: None })
        }
    }
}

fn choice(schema: &EnumSchema) -> Described {
    let text = |t: &Option<std::borrow::Cow<'static, str>>| t.as_deref().map(str::to_string);
    let plain = |values: &[String]| -> Vec<Choice> {
        values.iter().map(|v| Choice { value: v.clone(), label: v.clone() }).collect()
    };
    let titled = |items: &[rmcp::model::ConstTitle]| -> Vec<Choice> {
        items.iter().map(|c| Choice { value: c.const_.clone(), label: c.title.clone() }).collect()
    };
    match schema {
        EnumSchema::Single(SingleSelectEnumSchema::Untitled(s)) => (
            text(&s.title),
            text(&s.description),
            FieldKind::Choice { options: plain(&s.enum_), default: s.default.clone() },
        ),
        EnumSchema::Single(SingleSelectEnumSchema::Titled(s)) => (
            text(&s.title),
            text(&s.description),
            FieldKind::Choice { options: titled(&s.one_of), default: s.default.clone() },
        ),
        EnumSchema::Multi(MultiSelectEnumSchema::Untitled(m)) => (
            text(&m.title),
            text(&m.description),
            FieldKind::Choices {
                options: plain(&m.items.enum_),
                default: m.default.clone(),
                min_items: m.min_items,
                max_items: m.max_items,
            },
        ),
        EnumSchema::Multi(MultiSelectEnumSchema::Titled(m)) => (
            text(&m.title),
            text(&m.description),
            FieldKind::Choices {
                options: titled(&m.items.any_of),
                default: m.default.clone(),
                min_items: m.min_items,
                max_items: m.max_items,
            },
        ),
        EnumSchema::Legacy(l) => {
            let names = l.enum_names.clone().unwrap_or_default();
            let options = l
                .enum_
                .iter()
                .enumerate()
                .map(|(i, v)| Choice { value: v.clone(), label: names.get(i).unwrap_or(v).clone() })
                .collect();
            (text(&l.title), text(&l.description), FieldKind::Choice { options, default: l.default.clone() })
        }
        // A shape a later rmcp adds: no options to offer, so plain text the server checks.
        _ => {
            (None, None, FieldKind::Text { default: None, format: None, min_length: None, max_length: None })
        }
    }
}

fn format_name(format: StringFormat) -> String {
    match format {
        StringFormat::Email => "email",
        StringFormat::Uri => "uri",
        StringFormat::Date => "date",
        StringFormat::DateTime => "date-time",
        _ => "text",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A form like server-everything's: every kind of field, SEP-1034 defaults, SEP-1330 enums.
    fn params() -> ElicitRequestParams {
        serde_json::from_value(json!({
            "mode": "form",
            "message": "Please provide inputs",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Name", "minLength": 1},
                    "check": {"type": "boolean"},
                    "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                    "number": {"type": "number", "default": 2.5},
                    "friend": {"type": "string", "enum": ["Monica", "Ross"], "default": "Monica"},
                    "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}], "default": "hero-1"},
                    "fish": {"type": "array", "minItems": 1, "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}]}, "default": ["fish-1"]},
                    "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-2"},
                    "email": {"type": "string", "format": "email"}
                },
                "required": ["name"]
            }
        }))
        .unwrap_or_else(|e| panic!("params: {e}"))
    }

    #[test]
    fn a_form_keeps_order_defaults_and_choices() {
        let asked = from_params("everything", params()).unwrap_or_else(|| panic!("a form"));
        assert_eq!(asked.server, "everything");
        let ElicitationKind::Form(form) = asked.kind else { panic!("expected a form") };
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["name", "check", "integer", "number", "friend", "hero", "fish", "pet", "email"]);
        assert!(form.fields[0].required && !form.fields[1].required);
        assert_eq!(form.fields[0].label(), "Name");
        assert_eq!(
            form.fields[5].kind,
            FieldKind::Choice {
                options: vec![Choice { value: "hero-1".into(), label: "Superman".into() }],
                default: Some("hero-1".into())
            }
        );
        let FieldKind::Choice { options, .. } = &form.fields[7].kind else { panic!("legacy enum") };
        assert_eq!(options[1], Choice { value: "pet-2".into(), label: "Dogs".into() });
        let FieldKind::Text { format, .. } = &form.fields[8].kind else { panic!("email") };
        assert_eq!(format.as_deref(), Some("email"));
        assert_eq!(
            Value::Object(form.defaults()),
            json!({"integer": 42, "number": 2.5, "friend": "Monica", "hero": "hero-1", "fish": ["fish-1"], "pet": "pet-2"})
        );
        assert_eq!(form.missing_required(&form.defaults()), ["name"]);
    }

    #[test]
    fn an_accepted_form_gets_the_defaults_it_left_out() {
        let asked = from_params("s", params()).unwrap_or_else(|| panic!("a form"));
        let mut given = Map::new();
        given.insert("name".into(), json!("Ada"));
        given.insert("integer".into(), json!(7));
        let result = to_result(ElicitationAnswer::Accept(given), &asked.kind);
        assert_eq!(result.action, ElicitationAction::Accept);
        let content = result.content.unwrap_or_default();
        assert_eq!(content["name"], "Ada");
        assert_eq!(content["integer"], 7, "a given value is kept over the default");
        assert_eq!(content["friend"], "Monica");
        assert!(content.get("check").is_none(), "no default, not given: left out");
        let declined = to_result(ElicitationAnswer::Decline, &asked.kind);
        assert_eq!((declined.action, declined.content), (ElicitationAction::Decline, None));
    }

    #[test]
    fn a_url_elicitation_carries_no_content() {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "e1"
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let asked = from_params("s", params).unwrap_or_else(|| panic!("a url"));
        assert_eq!(asked.kind, ElicitationKind::Url { url: "https://example.com/x".into(), id: "e1".into() });
        let result = to_result(ElicitationAnswer::Accept(Map::new()), &asked.kind);
        assert_eq!((result.action, result.content), (ElicitationAction::Accept, None));
    }
}
