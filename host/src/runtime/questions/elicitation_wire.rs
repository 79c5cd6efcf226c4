//! An elicitation on the wire: rmcp's `elicitation/create` request read into the form a host
//! asks from ([`Elicitation`]), field by field in the server's order with its SEP-1034 default
//! and SEP-1330 choices, and the host's answer written back as rmcp's result. Pure: no I/O.

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema,
    MultiSelectEnumSchema, PrimitiveSchemaDefinition, SingleSelectEnumSchema, StringFormat,
};
use serde_json::{Map, Value};

use super::elicitation::{Choice, Elicitation, ElicitationAnswer, ElicitationKind, Field, FieldKind, Form};

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
