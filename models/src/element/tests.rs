use accesskit::Role;

use super::*;

/// The zenity list dialog measured on this machine (AT-SPI, GTK 3).
pub fn customers() -> A11yTree {
    outline(&[
        (0, Role::Dialog, "Customers", (490, 302, 302, 221)),
        (1, Role::Group, "", (498, 329, 286, 182)),
        (
            2,
            Role::Label,
            "Select items from the list below.",
            (503, 334, 276, 17),
        ),
        (2, Role::ScrollView, "", (503, 357, 276, 115)),
        (3, Role::Table, "", (504, 358, 274, 113)),
        (4, Role::ColumnHeader, "Name", (504, 358, 86, 25)),
        (4, Role::ColumnHeader, "City", (590, 358, 188, 25)),
        (4, Role::Cell, "Maria Olsen", (506, 384, 82, 21)),
        (4, Role::Cell, "Bergen", (592, 384, 184, 21)),
        (4, Role::Cell, "Per Hansen", (506, 407, 82, 21)),
        (4, Role::Cell, "Oslo", (592, 407, 184, 21)),
        (4, Role::Cell, "Maria Olsen", (506, 430, 82, 21)),
        (4, Role::Cell, "Tromsø", (592, 430, 184, 21)),
        (2, Role::Label, "User name", (503, 480, 80, 20)),
        (2, Role::TextInput, "", (590, 478, 180, 24)),
        (2, Role::Group, "", (498, 477, 100, 34)),
        (3, Role::Button, "OK", (698, 477, 86, 34)),
    ])
}

fn check(tree: &A11yTree, idx: u32, expect: Option<&str>) {
    let identity = identity_of(tree, "zenity", idx);
    assert_eq!(
        identity.as_ref().map(ElementIdentity::label).as_deref(),
        expect,
        "{identity:?}"
    );
}

#[test]
fn identities_name_the_row_the_label_or_the_nearest_named_ancestor() {
    let tree = customers();
    // A cell: its row's other cells are its band.
    check(&tree, 7, Some(r#"table cell "Maria Olsen" (row: Bergen)"#));
    check(&tree, 11, Some(r#"table cell "Maria Olsen" (row: Tromsø)"#));
    check(&tree, 12, Some(r#"table cell "Tromsø" (row: Maria Olsen)"#));
    // An unnamed field: its label to the left.
    check(&tree, 14, Some(r#"text field (label: User name)"#));
    // A named button needs no label.
    check(&tree, 16, Some(r#"button "OK""#));
    // An unnamed group has no identity, nor has the table above it, nor the
    // window (the root is the window, never a target).
    check(&tree, 15, None);
    check(&tree, 4, None);
    check(&tree, 0, None);
}

#[test]
fn an_identity_carries_its_window_and_path() {
    let identity = identity_of(&customers(), "zenity", 9).unwrap();
    assert_eq!(identity.app, "zenity");
    assert_eq!(
        identity.window,
        WindowIdentity {
            role: Role::Dialog,
            name: Some("Customers".into())
        }
    );
    let roles: Vec<Role> = identity.path.iter().map(|step| step.role).collect();
    assert_eq!(roles, [Role::Group, Role::ScrollView, Role::Table]);
    assert_eq!(identity.rect, Rect::new(506, 407, 82, 21));
}

#[test]
fn a_label_above_a_field_is_its_label_when_none_is_beside_it() {
    let tree = outline(&[
        (0, Role::Window, "Form", (0, 0, 400, 300)),
        (1, Role::Label, "E-mail", (10, 10, 60, 18)),
        (1, Role::TextInput, "", (10, 30, 200, 24)),
        (1, Role::Label, "Far away", (10, 150, 60, 18)),
        (1, Role::TextInput, "", (10, 240, 200, 24)),
    ]);
    check(&tree, 2, Some(r#"text field (label: E-mail)"#));
    // The second field's label is too far above it: no identity.
    check(&tree, 4, None);
}

#[test]
fn identities_round_trip_through_json() {
    let identity = identity_of(&customers(), "zenity", 11).unwrap();
    let json = serde_json::to_string(&identity).unwrap();
    assert_eq!(
        serde_json::from_str::<ElementIdentity>(&json).unwrap(),
        identity
    );
}
