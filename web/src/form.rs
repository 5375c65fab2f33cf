//! The editor's form: the variant select rewrites the scenario text through the core's parser,
//! so the form can never produce a scenario the core would refuse without saying so. (The
//! other scalar settings, such as `socket.mss`, had inputs of their own; they are edited in
//! the text now, which paid the bundle for event stepping.)

use crate::session::scenario_text;
use serde_json::Value;
use skblab_core::Scenario;

/// Sets the setting at the dotted `path` (such as `variant` or `socket.mss`) to `value` in the scenario `text`,
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
