//! Prompt templates: files under `prompts/` (compiled in), rendered with a
//! small engine: `{{name}}` is replaced by a value; a name with no value, or a
//! value given for no name, is an error rather than a silent gap.

use std::collections::HashMap;

/// The templates, by name.
const TEMPLATES: &[(&str, &str)] = &[
    ("ping", include_str!("../../prompts/ping.txt")),
    (
        "describe_segments",
        include_str!("../../prompts/describe_segments.txt"),
    ),
    (
        "modify_actions",
        include_str!("../../prompts/modify_actions.txt"),
    ),
    ("edit_steps", include_str!("../../prompts/edit_steps.txt")),
    ("next_action", include_str!("../../prompts/next_action.txt")),
];

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PromptError {
    #[error("there is no prompt template named {0:?}")]
    UnknownTemplate(String),
    #[error("the prompt {template:?} needs a value for {{{{{name}}}}}")]
    Missing { template: String, name: String },
    #[error("the prompt {template:?} has no {{{{{name}}}}} for the value given")]
    Unused { template: String, name: String },
    #[error("the prompt {template:?} has an unclosed {{{{")]
    Unclosed { template: String },
}

/// Renders template `name` with `values`.
pub fn render(name: &str, values: &HashMap<&str, String>) -> Result<String, PromptError> {
    let template = TEMPLATES
        .iter()
        .find(|(template_name, _)| *template_name == name)
        .map(|(_, text)| *text)
        .ok_or_else(|| PromptError::UnknownTemplate(name.to_owned()))?;
    render_text(name, template, values)
}

fn render_text(
    name: &str,
    template: &str,
    values: &HashMap<&str, String>,
) -> Result<String, PromptError> {
    let mut out = String::with_capacity(template.len());
    let mut used = std::collections::HashSet::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}").ok_or_else(|| PromptError::Unclosed {
            template: name.to_owned(),
        })?;
        let key = after[..end].trim();
        let value = values.get(key).ok_or_else(|| PromptError::Missing {
            template: name.to_owned(),
            name: key.to_owned(),
        })?;
        used.insert(key);
        out.push_str(value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if let Some(unused) = values.keys().find(|key| !used.contains(*key)) {
        return Err(PromptError::Unused {
            template: name.to_owned(),
            name: (*unused).to_owned(),
        });
    }
    Ok(out.trim_end().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_mistakes_are_errors() {
        let values = HashMap::from([("n_segments", "3".to_owned())]);
        let text = render_text("t", "Describe {{ n_segments }} segments.", &values).unwrap();
        assert_eq!(text, "Describe 3 segments.");
        assert!(matches!(
            render_text("t", "{{a}}", &values),
            Err(PromptError::Missing { .. })
        ));
        assert!(matches!(
            render_text("t", "none", &values),
            Err(PromptError::Unused { .. })
        ));
        assert!(matches!(
            render_text("t", "{{oops", &HashMap::new()),
            Err(PromptError::Unclosed { .. })
        ));
    }

    #[test]
    fn every_template_renders_and_none_pleads() {
        for (name, text) in TEMPLATES {
            let lower = text.to_lowercase();
            for pleading in ["lives are at stake", "please", "i beg", "very important"] {
                assert!(!lower.contains(pleading), "{name} pleads: {pleading:?}");
            }
            assert!(!text.trim().is_empty(), "{name} is empty");
        }
        let values = HashMap::new();
        assert!(render("ping", &values).unwrap().contains("\"ok\""));
    }
}
