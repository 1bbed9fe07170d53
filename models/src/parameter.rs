//! Parameters: the names that stand for what a recording typed (a secret's
//! placeholder `{password}`, a text a replay may change with `--set`).

/// A parameter's name from a field's label: `User name:` → `user_name`.
/// Letters and digits are kept (lowercased), every other run becomes one
/// `_`; a label with neither gives `text`.
pub fn name_from_label(label: &str) -> String {
    let mut name = String::new();
    for char in label.trim().chars() {
        if char.is_alphanumeric() {
            name.extend(char.to_lowercase());
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_end_matches('_').to_owned();
    if name.is_empty() {
        "text".to_owned()
    } else {
        name
    }
}

/// Whether `name` can name a parameter: letters, digits and `_`, starting
/// with a letter, at most 64 characters (it becomes part of an environment
/// variable's name, `REPRISE_SECRET_PASSWORD`).
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(char::is_alphabetic)
        && chars.all(|char| char.is_alphanumeric() || char == '_')
        && name.chars().count() <= 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_labels() {
        assert_eq!(name_from_label("User name:"), "user_name");
        assert_eq!(name_from_label("  Password: "), "password");
        assert_eq!(name_from_label("E-mail (work)"), "e_mail_work");
        assert_eq!(name_from_label("Größe"), "größe");
        assert_eq!(name_from_label("***"), "text");
        assert!(is_valid_name("user_name"));
        assert!(!is_valid_name("2fa"));
        assert!(!is_valid_name("a-b"));
        assert!(!is_valid_name(""));
    }
}
