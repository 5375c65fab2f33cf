//! The editor's form: the scenario's common knobs (its scalar settings, such as `socket.mss` or
//! `device.sg`) read from the parsed scenario, for any mechanism. Changing one rewrites the text
//! through the core's parser, so the form can never produce a scenario the core would refuse
//! without saying so.

use crate::session::scenario_text;
use serde_json::Value;
use skblab_core::Scenario;

/// One knob: its dotted path and current value (a number, a flag or a word).
#[derive(Clone, Debug, PartialEq)]
pub struct Knob {
    pub path: String,
    pub value: Value,
}

/// The scalar settings of `s`, in the scenario's field order: nested tables one level deep
/// (`socket.mss`), then top-level scalars. Operations, the mechanism and the title are left
/// to the text.
pub fn knobs(s: &Scenario) -> Vec<Knob> {
    let v: Value = serde_json::from_str(&s.to_json()).expect("scenario JSON");
    let Value::Object(top) = v else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in &top {
        match v {
            Value::Object(inner) => out.extend(inner.iter().filter(|(_, v)| is_scalar(v)).map(
                |(ik, iv)| Knob {
                    path: format!("{k}.{ik}"),
                    value: iv.clone(),
                },
            )),
            v if is_scalar(v) && !["mechanism", "title", "variant"].contains(&k.as_str()) => out
                .push(Knob {
                    path: k.clone(),
                    value: v.clone(),
                }),
            _ => {}
        }
    }
    out
}

fn is_scalar(v: &Value) -> bool {
    matches!(v, Value::Bool(_) | Value::Number(_) | Value::String(_))
}

/// Sets `path` (as [`knobs`] names it, or `variant`) to `value` in the scenario `text`,
/// returning the new text. The text must parse; the result is checked by the core's parser.
pub fn set(text: &str, path: &str, value: Value) -> Result<String, String> {
    let s = Scenario::parse(text).map_err(|e| e.to_string())?;
    let mut v: Value = serde_json::from_str(&s.to_json()).expect("scenario JSON");
    let slot = path
        .split('.')
        .try_fold(&mut v, |v, k| {
            v.as_object_mut().map(|o| o.entry(k).or_insert(Value::Null))
        })
        .ok_or_else(|| format!("`{path}` is not a setting of this scenario"))?;
    *slot = value;
    let s = Scenario::from_value(v, "form").map_err(|e| e.to_string())?;
    Ok(scenario_text(&s))
}
