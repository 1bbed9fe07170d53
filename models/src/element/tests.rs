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
    // The second field's label is too far above it: it is a text field
    // with no label (a text area stands alone), which the first one is not.
    check(&tree, 4, Some("text field"));
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

/// GTK's list of 21 rows (two cells each, under two column headers) in a
/// view of 7 rows: the cells below it come with their size and no place.
fn gtk_list_scrolled(rows: usize) -> (A11yTree, Vec<u32>) {
    let mut outline_rows = vec![
        (0, Role::Dialog, "Customers", (490, 500, 302, 300)),
        (1, Role::Table, "", (664, 526, 274, 184)),
        (2, Role::ColumnHeader, "Name", (664, 526, 95, 25)),
        (2, Role::ColumnHeader, "City", (759, 526, 179, 25)),
    ];
    let names: Vec<String> = (0..rows).map(|row| format!("Anne Berg {row}")).collect();
    for (row, name) in names.iter().enumerate() {
        let top = 552 + 23 * row as i32;
        let showing = row < 7;
        let (name_at, city_at) = if showing {
            ((666, top), (761, top))
        } else {
            ((0, 0), (0, 0))
        };
        outline_rows.push((2, Role::Cell, name, (name_at.0, name_at.1, 91, 21)));
        outline_rows.push((2, Role::Cell, "Oslo", (city_at.0, city_at.1, 175, 21)));
    }
    let tree = outline(&outline_rows);
    let unplaced = (0..tree.nodes.len() as u32)
        .filter(|&idx| {
            tree.nodes[idx as usize]
                .rect
                .is_some_and(|rect| rect.left == 0)
        })
        .collect();
    (tree, unplaced)
}

#[test]
fn rows_scrolled_out_of_view_are_placed_where_their_rows_would_be() {
    let (mut tree, unplaced) = gtk_list_scrolled(21);
    place_offscreen(&mut tree, 1, &unplaced);
    let rect = |idx: usize| tree.nodes[idx].rect;
    // The last row (the 21st): 20 rows of 23 px below the first, each cell
    // in its column; the two on one line, so each has the other as its band.
    let last = tree.nodes.len() - 2;
    assert_eq!(rect(last), Some(Rect::new(666, 552 + 20 * 23, 91, 21)));
    assert_eq!(rect(last + 1), Some(Rect::new(761, 552 + 20 * 23, 175, 21)));
    assert_eq!(band_of(&tree, Some(1), last as u32), ["Oslo"]);
    // The first row below the view: just below it.
    assert_eq!(rect(4 + 2 * 7), Some(Rect::new(666, 713, 91, 21)));
    // A cell of a width no placed cell has cannot be placed.
    let (mut tree, unplaced) = gtk_list_scrolled(9);
    let odd = unplaced[0] as usize;
    tree.nodes[odd].rect = Some(Rect::new(0, 0, 50, 21));
    place_offscreen(&mut tree, 1, &unplaced);
    assert_eq!(tree.nodes[odd].rect, None);
    // Nor one that would land inside the view (rows of uneven heights).
    let (mut tree, unplaced) = gtk_list_scrolled(9);
    for row in 1..7 {
        for cell in [4 + 2 * row, 5 + 2 * row] {
            if let Some(rect) = tree.nodes[cell].rect.as_mut() {
                rect.top = 552 + row as i32;
            }
        }
    }
    place_offscreen(&mut tree, 1, &unplaced);
    assert!(
        unplaced
            .iter()
            .all(|&idx| tree.nodes[idx as usize].rect.is_none())
    );
}
