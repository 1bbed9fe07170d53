//! A program compiled over the planned steps: values typed in, variables
//! marked, recorded steps in the program's order, each instruction's
//! window resolved.

use std::collections::BTreeMap;

use reprise_models::ActionEvent;
use reprise_models::program::{
    Entry, Facts, Over, Piece, Program, ProgramError, Repeat, Tables, Until, block_ends, pieces,
};

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
    tables: &Tables,
) -> Result<Compiled, ProgramError> {
    check(&planned, program, names, tables)?;
    let variables = program.variables(tables);
    let mut values = marked_values(program, set, &variables)?;
    values.extend(set.iter().cloned());
    let parameters = typed_parameters(&planned, names, &values);
    let mut trees = crate::params::set_parameters(planned, &values, names)
        .map_err(|err| at_values("", err.to_string()))?;
    for tree in &mut trees {
        mark_variables(tree, &variables);
    }
    let blocks = block_ends(&program.entries)?;
    let block_of = |idx: usize| {
        blocks
            .iter()
            .find(|block| block.middle == Some(idx))
            .copied()
    };
    let mut slots = Vec::new();
    let mut chosen = Vec::new();
    for (idx, entry) in program.entries.iter().enumerate() {
        match entry {
            Entry::Recorded { step } => {
                slots.push(recorded_slot(&trees, *step, chosen.len(), &variables));
                chosen.push(trees[*step - 1].clone());
            }
            Entry::Else => slots.push(Slot::Else {
                end: block_of(idx).map_or(idx, |block| block.end),
            }),
            Entry::End => slots.push(Slot::End {
                opener: blocks
                    .iter()
                    .find(|block| block.end == idx)
                    .map_or(idx, |block| block.opener),
            }),
            instruction => {
                let (app, window) = where_to_look(instruction, idx, program, &trees)?;
                let table = match instruction {
                    Entry::Repeat(Repeat {
                        over: Over::Rows(file),
                        ..
                    }) => tables.get(file).cloned(),
                    _ => None,
                };
                slots.push(Slot::Instruction(Instruction {
                    entry: instruction.clone(),
                    app,
                    window,
                    block: blocks.iter().find(|block| block.opener == idx).copied(),
                    table,
                }));
            }
        }
    }
    Ok(Compiled {
        trees: chosen,
        slots,
        variables,
        secrets: program.secret_variables(),
        parameters,
    })
}

/// The value each text parameter is typed with in this run: `values`'
/// (later ones win), else the recorded one; one whose value names a
/// variable read as the run goes has none here.
fn typed_parameters(
    planned: &[ActionEvent],
    names: &crate::params::Names,
    values: &[(String, String)],
) -> BTreeMap<String, String> {
    let mut typed: BTreeMap<String, String> = crate::params::recorded_texts(planned, names)
        .into_iter()
        .collect();
    let marked = |value: &str| value.chars().any(|c| u32::from(c) >= VARIABLE_MARK);
    for (name, value) in values {
        if let Some(slot) = typed.get_mut(name) {
            slot.clone_from(value);
        }
        if marked(value) {
            typed.remove(name);
        }
    }
    typed
}

/// Recorded step `step` (from 1) as the inner strategy's step `inner`;
/// where it types a variable, the window of the field it types into: the
/// focused field its keys read, else the element of the press before it.
fn recorded_slot(trees: &[ActionEvent], step: usize, inner: usize, variables: &[String]) -> Slot {
    let tree = &trees[step - 1];
    let types_variable = crate::params::secret_names(std::slice::from_ref(tree))
        .iter()
        .any(|name| variables.contains(name));
    Slot::Recorded {
        inner,
        step,
        types_into: element_of(tree)
            .or_else(|| trees[..step - 1].iter().rev().find_map(element_of))
            .filter(|_| types_variable)
            .map(|field| TreeRequest {
                app: field.app.clone(),
                window: field.window.clone(),
                whole_lists: false,
            }),
    }
}

/// `program`'s rules, over the planned steps' parameters.
fn check(
    planned: &[ActionEvent],
    program: &Program,
    names: &crate::params::Names,
    tables: &Tables,
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
    program.check(&Facts {
        n_steps: planned.len(),
        parameters: &typed_at,
        secrets: &secrets,
        tables,
    })
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
    let until = match entry {
        Entry::Wait(wait) | Entry::If(wait) => Some(&wait.until),
        Entry::Repeat(Repeat {
            over: Over::While(until),
            ..
        }) => Some(until),
        _ => None,
    };
    let query = match (entry, until) {
        (
            _,
            Some(Until::Shows { element } | Until::Gone { element } | Until::Holds { element, .. }),
        ) => element,
        (_, Some(Until::Window { .. } | Until::Value { .. })) => {
            return Ok((String::new(), None));
        }
        (Entry::Assert(assertion), _) => &assertion.element,
        (Entry::Read(read), _) => &read.element,
        _ => return Ok((String::new(), None)),
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
