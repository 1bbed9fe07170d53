//! A program compiled over the planned steps: values typed in, variables
//! marked, recorded steps in the program's order, each instruction's
//! window resolved.

use std::collections::BTreeMap;

use reprise_models::ActionEvent;
use reprise_models::program::{Entry, Piece, Program, ProgramError, Until, pieces};

use super::{Compiled, Instruction, Slot};
use crate::desktop::TreeRequest;

/// The first character standing for variable `idx` while values are put in
/// (Unicode's private use area: never typed by a person here).
const VARIABLE_MARK: u32 = 0xF0000;

/// The planned steps (parameters named) as `program` replays them: its
/// values and `set` (the command line's, which win) typed in, a variable
/// typed as the value read at replay, the recorded steps in the program's
/// order. `n_steps` is checked by [`Program::check`] first.
pub fn compile(
    planned: Vec<ActionEvent>,
    program: &Program,
    set: &[(String, String)],
    names: &crate::params::Names,
) -> Result<Compiled, ProgramError> {
    check(&planned, program, names)?;
    let variables = program.variables();
    let mut values = marked_values(program, set, &variables)?;
    values.extend(set.iter().cloned());
    let mut trees = crate::params::set_parameters(planned, &values, names)
        .map_err(|err| at_values("", err.to_string()))?;
    for tree in &mut trees {
        mark_variables(tree, &variables);
    }
    let mut slots = Vec::new();
    let mut chosen = Vec::new();
    for (idx, entry) in program.entries.iter().enumerate() {
        match entry {
            Entry::Recorded { step } => {
                let tree = &trees[*step - 1];
                let types_variable = crate::params::secret_names(std::slice::from_ref(tree))
                    .iter()
                    .any(|name| variables.contains(name));
                slots.push(Slot::Recorded {
                    inner: chosen.len(),
                    step: *step,
                    // The focused field its keys read, else the element of
                    // the press before it (where the focus was put).
                    types_into: element_of(tree)
                        .or_else(|| trees[..*step - 1].iter().rev().find_map(element_of))
                        .filter(|_| types_variable)
                        .map(|field| TreeRequest {
                            app: field.app.clone(),
                            window: field.window.clone(),
                            whole_lists: false,
                        }),
                });
                chosen.push(tree.clone());
            }
            instruction => {
                let (app, window) = where_to_look(instruction, idx, program, &trees)?;
                slots.push(Slot::Instruction(Instruction {
                    entry: instruction.clone(),
                    app,
                    window,
                }));
            }
        }
    }
    Ok(Compiled {
        trees: chosen,
        slots,
        variables,
    })
}

/// `program`'s rules, over the planned steps' parameters.
fn check(
    planned: &[ActionEvent],
    program: &Program,
    names: &crate::params::Names,
) -> Result<(), ProgramError> {
    use crate::params::ParameterKind;
    let parameters = crate::params::parameters(planned, names);
    let typed_at: BTreeMap<String, usize> = parameters
        .iter()
        .filter(|param| matches!(param.kind, ParameterKind::Text { .. }))
        .map(|param| (param.name.clone(), param.step + 1))
        .collect();
    let secrets: Vec<String> = parameters
        .iter()
        .filter(|param| param.kind == ParameterKind::Secret)
        .map(|param| param.name.clone())
        .collect();
    program.check(planned.len(), &typed_at, &secrets)
}

/// The program's values not given on the command line (`set`), each
/// variable in them marked by its character.
fn marked_values(
    program: &Program,
    set: &[(String, String)],
    variables: &[String],
) -> Result<Vec<(String, String)>, ProgramError> {
    let mark = |name: &str| {
        variables
            .iter()
            .position(|known| known == name)
            .and_then(|idx| char::from_u32(VARIABLE_MARK + idx as u32))
    };
    let mut values: Vec<(String, String)> = Vec::new();
    for (name, value) in &program.values {
        if set.iter().any(|(given, _)| given == name) {
            continue;
        }
        let mut marked = String::new();
        for piece in pieces(value).map_err(|err| at_values(name, err.to_string()))? {
            match piece {
                Piece::Text(text) => marked.push_str(&text),
                Piece::Variable(variable) => marked.push(
                    mark(&variable)
                        .ok_or_else(|| at_values(name, format!("{{{variable}}} is not read")))?,
                ),
            }
        }
        values.push((name.clone(), marked));
    }
    Ok(values)
}

fn at_values(name: &str, message: String) -> ProgramError {
    ProgramError {
        entry: None,
        field: if name.is_empty() {
            "values".into()
        } else {
            format!("values.{name}")
        },
        message,
    }
}

/// A typed character that marks a variable becomes a key of it, as a
/// secret's keys are: typed once, as its value.
fn mark_variables(tree: &mut ActionEvent, variables: &[String]) {
    let marked = tree.key_char.as_deref().and_then(|text| {
        let mut chars = text.chars();
        let c = chars.next()?;
        let idx = (c as u32).checked_sub(VARIABLE_MARK)? as usize;
        (chars.next().is_none()).then(|| variables.get(idx).cloned())?
    });
    if let Some(name) = marked {
        tree.secret = Some(name);
        tree.key_char = None;
    }
    for child in &mut tree.children {
        mark_variables(child, variables);
    }
    tree.fill_text();
}

/// The element an instruction names is looked for in its own window and
/// application, else in those of the recorded step after it (else before
/// it).
fn where_to_look(
    entry: &Entry,
    idx: usize,
    program: &Program,
    trees: &[ActionEvent],
) -> Result<(String, Option<String>), ProgramError> {
    let query = match entry {
        Entry::Wait(wait) => match &wait.until {
            Until::Window { .. } => return Ok((String::new(), None)),
            Until::Shows { element } | Until::Gone { element } | Until::Holds { element, .. } => {
                element
            }
        },
        Entry::Assert(assertion) => &assertion.element,
        Entry::Read(read) => &read.element,
        Entry::Recorded { .. } => unreachable!("a recorded step is not an instruction"),
    };
    let neighbour = |entry: &Entry| match entry {
        Entry::Recorded { step } => element_of(&trees[*step - 1]),
        _ => None,
    };
    let near = program.entries[idx + 1..]
        .iter()
        .find_map(neighbour)
        .or_else(|| program.entries[..idx].iter().rev().find_map(neighbour));
    let app = query
        .app
        .clone()
        .or_else(|| near.map(|element| element.app.clone()));
    let window = query
        .window
        .clone()
        .or_else(|| near.and_then(|element| element.window.name.clone()));
    match app {
        Some(app) if window.is_some() => Ok((app, window)),
        _ => Err(ProgramError {
            entry: Some(idx),
            field: "window".into(),
            message: "no recorded step near it names an accessible window: give the element's window (and app)".into(),
        }),
    }
}

pub(super) fn element_of(tree: &ActionEvent) -> Option<&reprise_models::ElementIdentity> {
    std::iter::once(tree)
        .chain(&tree.children)
        .find_map(|event| event.element.as_deref())
}
