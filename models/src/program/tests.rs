//! The program's rules and texts.

use super::*;

fn field(name: &str) -> Query {
    Query {
        role: Some(Role::TextInput),
        name: Some(name.into()),
        ..Default::default()
    }
}

fn params() -> BTreeMap<String, usize> {
    BTreeMap::from([("copy_here".to_owned(), 2)])
}

fn facts<'a>(parameters: &'a BTreeMap<String, usize>, secrets: &'a [String]) -> Facts<'a> {
    static TABLES: std::sync::LazyLock<Tables> = std::sync::LazyLock::new(|| {
        Tables::from([(
            "people.csv".to_owned(),
            Table {
                columns: vec!["name".into(), "city".into()],
                rows: vec![vec!["a".into(), "b".into()]; 3],
            },
        )])
    });
    Facts {
        n_steps: 2,
        parameters,
        secrets,
        tables: &TABLES,
    }
}

fn read_then_type() -> Program {
    Program {
        entries: vec![
            Entry::Read(Read {
                element: field("Total"),
                into: "total".into(),
                secret: false,
            }),
            Entry::Recorded { step: 1 },
            Entry::Recorded { step: 2 },
        ],
        values: BTreeMap::from([("copy_here".to_owned(), "{total} EUR".to_owned())]),
    }
}

#[test]
fn a_program_that_reads_before_it_types_passes() {
    read_then_type().check(&facts(&params(), &[])).unwrap();
    assert!(Program::recorded(3).is_recorded(3));
    assert_eq!(read_then_type().variables(&Tables::new()), ["total"]);
}

#[test]
fn mistakes_name_their_entry_and_field() {
    let mut twice = read_then_type();
    twice.entries.push(Entry::Recorded { step: 1 });
    let err = twice.check(&facts(&params(), &[])).unwrap_err();
    assert_eq!((err.entry, err.field.as_str()), (Some(3), "recorded"));

    let mut outside = read_then_type();
    outside.entries[1] = Entry::Recorded { step: 9 };
    assert!(
        outside
            .check(&facts(&params(), &[]))
            .unwrap_err()
            .message
            .contains("1 to 2")
    );

    let mut unbounded = read_then_type();
    unbounded.entries.push(Entry::Wait(Wait {
        until: Until::Window {
            title: "Saved".into(),
        },
        timeout_seconds: 0.0,
    }));
    assert_eq!(
        unbounded.check(&facts(&params(), &[])).unwrap_err().field,
        "wait.timeout"
    );

    let mut unknown = read_then_type();
    unknown.values.insert("copy_here".into(), "{totl}".into());
    let err = unknown.check(&facts(&params(), &[])).unwrap_err();
    assert_eq!(err.field, "values.copy_here");
    assert!(err.message.contains("{totl} is not a variable"), "{err}");

    let mut late = read_then_type();
    late.entries.swap(0, 2);
    let err = late.check(&facts(&params(), &[])).unwrap_err();
    assert!(
        err.message.contains("before the step that reads it"),
        "{err}"
    );

    let mut nameless = read_then_type();
    nameless.entries[0] = Entry::Read(Read {
        element: Query::default(),
        into: "total".into(),
        secret: false,
    });
    assert!(
        nameless
            .check(&facts(&params(), &[]))
            .unwrap_err()
            .message
            .contains("names no element")
    );

    let mut secret = read_then_type();
    secret.values.insert("password".into(), "x".into());
    assert!(
        secret
            .check(&facts(&params(), &["password".to_owned()]))
            .unwrap_err()
            .message
            .contains("secret")
    );

    let mut assert_early = read_then_type();
    assert_early.entries.insert(
        0,
        Entry::Assert(Assertion {
            element: field("Total"),
            compare: Compare::Equals("{total}".into()),
        }),
    );
    assert!(assert_early.check(&facts(&params(), &[])).is_err());
}

#[test]
fn values_compare_as_people_read_them() {
    assert!(Compare::Equals(String::new()).passes(" 42 ", "42"));
    assert!(!Compare::Equals(String::new()).passes("42.0", "42"));
    assert!(Compare::Contains(String::new()).passes("Total: 42 EUR", "42"));
    assert!(Compare::Matches(String::new()).passes("Invoice 2026-12", "Invoice *-??"));
    assert!(!Compare::Matches(String::new()).passes("Invoice 2026-1", "Invoice *-??"));
    let near = Compare::Near {
        value: 1234.5,
        within: 0.01,
    };
    assert!(near.passes("1,234.50 €", ""));
    assert!(!near.passes("1,234.60", ""));
    assert!(!near.passes("none", ""));
}

#[test]
fn a_text_names_variables_in_braces() {
    assert_eq!(
        pieces("a {x}{{b}}").unwrap(),
        [
            Piece::Text("a ".into()),
            Piece::Variable("x".into()),
            Piece::Text("{b}".into())
        ]
    );
    assert_eq!(pieces("{x"), Err(TemplateError::Unclosed));
    assert_eq!(pieces("x}"), Err(TemplateError::Unopened));
    assert!(matches!(pieces("{1x}"), Err(TemplateError::BadName(_))));
    let values = BTreeMap::from([("x".to_owned(), "1".to_owned())]);
    assert_eq!(fill("a{x}b", &values).unwrap(), "a1b");
    assert_eq!(
        fill("{y}", &values).unwrap_err(),
        FillError::Unset("y".into())
    );
    // A text shown as it is: its braces name nothing.
    assert_eq!(
        pieces(&literal("Dear {x}}")).unwrap(),
        [Piece::Text("Dear {x}}".into())]
    );
}

#[test]
fn a_program_round_trips_as_stored() {
    let mut program = read_then_type();
    program.entries.push(Entry::Wait(Wait {
        until: Until::Holds {
            element: field("Status"),
            compare: Compare::Near {
                value: 1.0,
                within: 0.5,
            },
        },
        timeout_seconds: 5.0,
    }));
    let json = serde_json::to_string(&program).unwrap();
    assert_eq!(serde_json::from_str::<Program>(&json).unwrap(), program);
}

#[test]
fn blocks_close_in_order_and_loops_are_bounded() {
    let window = |title: &str| Wait {
        until: Until::Window {
            title: title.into(),
        },
        timeout_seconds: 0.0,
    };
    let rows = |max: u32| {
        Entry::Repeat(Repeat {
            over: Over::Rows("people.csv".into()),
            max,
        })
    };
    let program = |entries: Vec<Entry>| Program {
        entries,
        values: BTreeMap::from([("copy_here".to_owned(), "{name}".to_owned())]),
    };
    let good = program(vec![
        rows(3),
        Entry::If(window("Confirm")),
        Entry::Recorded { step: 1 },
        Entry::Else,
        Entry::End,
        Entry::Recorded { step: 2 },
        Entry::End,
    ]);
    good.check(&facts(&params(), &[])).unwrap();
    assert_eq!(
        block_ends(&good.entries).unwrap(),
        [
            Block {
                opener: 0,
                middle: None,
                end: 6
            },
            Block {
                opener: 1,
                middle: Some(3),
                end: 4
            },
        ]
    );
    assert_eq!(
        good.variables(facts(&params(), &[]).tables),
        ["name", "city"]
    );

    let mut open = good.clone();
    open.entries.pop();
    let err = open.check(&facts(&params(), &[])).unwrap_err();
    assert_eq!(
        (err.entry, err.field.as_str()),
        (Some(0), "repeat"),
        "{err}"
    );
    assert!(err.message.contains("has no end"), "{err}");

    let stray_else = program(vec![rows(3), Entry::Else, Entry::End]);
    assert_eq!(
        stray_else.check(&facts(&params(), &[])).unwrap_err().field,
        "else"
    );
    let stray_end = program(vec![Entry::End]);
    assert_eq!(
        stray_end.check(&facts(&params(), &[])).unwrap_err().field,
        "end"
    );

    let unbounded = program(vec![rows(0), Entry::Recorded { step: 2 }, Entry::End]);
    assert_eq!(
        unbounded.check(&facts(&params(), &[])).unwrap_err().field,
        "repeat.max"
    );
    let too_few = program(vec![rows(2), Entry::Recorded { step: 2 }, Entry::End]);
    assert!(
        too_few
            .check(&facts(&params(), &[]))
            .unwrap_err()
            .message
            .contains("3 rows, more than max = 2")
    );
    let unread = program(vec![
        Entry::Repeat(Repeat {
            over: Over::Rows("other.csv".into()),
            max: 5,
        }),
        Entry::End,
    ]);
    assert_eq!(
        unread.check(&facts(&params(), &[])).unwrap_err().field,
        "repeat.rows"
    );
    // A variable's value is a condition of an if, never of a wait.
    let on_value = Wait {
        until: Until::Value {
            text: "{name}".into(),
            compare: Compare::Equals("a".into()),
        },
        timeout_seconds: 0.0,
    };
    let mut valued = good.clone();
    valued.entries[1] = Entry::If(on_value.clone());
    valued.check(&facts(&params(), &[])).unwrap();
    valued.entries.insert(
        0,
        Entry::Wait(Wait {
            timeout_seconds: 1.0,
            ..on_value
        }),
    );
    assert_eq!(
        valued.check(&facts(&params(), &[])).unwrap_err().field,
        "wait.value"
    );
}

/// A check may expect a text parameter's value (an outcome marked while
/// recording shows what was typed): the value typed in this run. Any other
/// name is a variable that must be read first.
#[test]
fn a_check_may_name_a_text_parameter_and_nothing_unread() {
    let expecting = |text: &str| Program {
        entries: vec![
            Entry::Recorded { step: 1 },
            Entry::Assert(Assertion {
                element: field("Copy here"),
                compare: Compare::Equals(text.into()),
            }),
        ],
        values: BTreeMap::new(),
    };
    expecting("sent to {copy_here}")
        .check(&facts(&params(), &[]))
        .unwrap();
    let err = expecting("{copy}")
        .check(&facts(&params(), &[]))
        .unwrap_err();
    assert!(err.message.contains("{copy} is not read"), "{err:?}");
}
