//! What no stored frame may show: the box of every secret field (a password
//! entry the tree named, or one a press or a focus read found) while its
//! window is active, and the whole box of a window the person excluded
//! (`--exclude-window`). The observer masks a frame before it is hashed or
//! encoded, so no form of it is kept unmasked.
//!
//! A secret field found by a press or a focus read is known only once the
//! element reader answers, so a frame taken while a request is out waits for
//! the answer (at most [`ANSWER_WAIT`]) before it is masked and sent on.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use image::RgbaImage;
use reprise_models::{A11yTree, ElementIdentity, Rect, ScreenGeometry};

use super::secrets::WindowPattern;
use crate::platform::ActiveWindow;

/// How long a frame waits for the element reader's outstanding answers.
pub const ANSWER_WAIT: Duration = Duration::from_secs(1);

/// One secret field: its box, and the window it shows in.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    window_id: Option<u64>,
    window_title: Option<String>,
    rect: Rect,
}

#[derive(Debug, Default)]
struct State {
    fields: Vec<Field>,
    excluded: Vec<WindowPattern>,
    /// Element requests offered and not yet answered.
    outstanding: u64,
}

/// Shared by the main loop (requests out), the element reader (answers),
/// the tree reader (fields in a new window's tree) and the observer.
#[derive(Debug, Clone, Default)]
pub struct Masks {
    inner: Arc<(Mutex<State>, Condvar)>,
}

impl Masks {
    pub fn new(excluded: Vec<WindowPattern>) -> Masks {
        let masks = Masks::default();
        masks.state().excluded = excluded;
        masks
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.inner.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An element request went out.
    pub fn request_out(&self) {
        self.state().outstanding += 1;
    }

    /// The reader answered a request with `element`.
    pub fn answered(&self, element: Option<&ElementIdentity>) {
        let mut state = self.state();
        state.outstanding = state.outstanding.saturating_sub(1);
        if let Some(element) =
            element.filter(|element| reprise_models::element::is_secret_field(element.role))
        {
            add(
                &mut state.fields,
                Field {
                    window_id: None,
                    window_title: element.window.name.clone(),
                    rect: element.rect,
                },
            );
        }
        drop(state);
        self.inner.1.notify_all();
    }

    /// The secret fields of a window's tree.
    pub fn tree_read(&self, window: &ActiveWindow, tree: &A11yTree) {
        let mut state = self.state();
        for node in &tree.nodes {
            if let (true, Some(rect)) = (
                reprise_models::element::is_secret_field(node.role),
                node.rect,
            ) {
                add(
                    &mut state.fields,
                    Field {
                        window_id: Some(window.window_id),
                        window_title: None,
                        rect,
                    },
                );
            }
        }
    }

    /// Waits (bounded) for the answers outstanding, then fills in `image`
    /// (a capture of `screen`) every box that must not show while `window`
    /// is active. Returns how many boxes were filled.
    pub fn apply(
        &self,
        image: &mut RgbaImage,
        screen: ScreenGeometry,
        window: Option<&ActiveWindow>,
    ) -> usize {
        let deadline = Instant::now() + ANSWER_WAIT;
        let mut state = self.state();
        while state.outstanding > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .inner
                .1
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let Some(window) = window else {
            return 0;
        };
        let mut boxes: Vec<Rect> = state
            .fields
            .iter()
            .filter(|field| {
                field.window_id == Some(window.window_id)
                    || field.window_title.as_deref() == Some(window.title.as_str())
            })
            .map(|field| field.rect)
            .collect();
        if state
            .excluded
            .iter()
            .any(|pattern| pattern.matches(&window.app_class, &window.title))
        {
            boxes.push(window.rect);
        }
        drop(state);
        for rect in &boxes {
            crate::store::frames::mask_box(image, screen, *rect);
        }
        boxes.len()
    }
}

fn add(fields: &mut Vec<Field>, field: Field) {
    if !fields.contains(&field) {
        fields.push(field);
    }
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;
    use crate::store::frames::MASK;

    fn window(id: u64, title: &str) -> ActiveWindow {
        ActiveWindow {
            title: title.into(),
            app_class: "Zenity".into(),
            pid: None,
            window_id: id,
            rect: Rect::new(100, 100, 200, 100),
            popup: false,
        }
    }

    #[test]
    fn secret_boxes_are_filled_only_while_their_window_is_active() {
        let screen = ScreenGeometry {
            rect: Rect::new(0, 0, 400, 300),
            scale_factor: 2.0,
        };
        let masks = Masks::new(vec![WindowPattern::new("keepass").unwrap()]);
        let tree = A11yTree {
            app: "zenity".into(),
            root: 0,
            nodes: vec![reprise_models::A11yNode {
                role: accesskit::Role::PasswordInput,
                name: None,
                rect: Some(Rect::new(110, 120, 10, 5)),
                states: vec![],
                value: None,
                children: vec![],
            }],
        };
        masks.tree_read(&window(7, "Log in"), &tree);
        let mut image = RgbaImage::new(800, 600);
        assert_eq!(
            masks.apply(&mut image, screen, Some(&window(8, "Other"))),
            0
        );
        assert_eq!(image.get_pixel(230, 250), &Rgba([0, 0, 0, 0]));
        assert_eq!(
            masks.apply(&mut image, screen, Some(&window(7, "Log in"))),
            1
        );
        assert_eq!(image.get_pixel(220, 240), &MASK, "scaled to pixels");
        assert_eq!(image.get_pixel(239, 249), &MASK);
        assert_eq!(image.get_pixel(240, 250), &Rgba([0, 0, 0, 0]));
        let mut excluded = window(9, "db.kdbx - KeePass");
        excluded.rect = Rect::new(350, 250, 100, 100);
        let mut image = RgbaImage::new(800, 600);
        assert_eq!(masks.apply(&mut image, screen, Some(&excluded)), 1);
        assert_eq!(image.get_pixel(799, 599), &MASK, "clipped to the screen");
    }

    #[test]
    fn a_frame_waits_for_an_outstanding_answer_and_is_masked_by_it() {
        let screen = ScreenGeometry {
            rect: Rect::new(0, 0, 100, 100),
            scale_factor: 1.0,
        };
        let masks = Masks::default();
        masks.request_out();
        let answering = masks.clone();
        let reader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            let element = ElementIdentity {
                version: 1,
                app: "zenity".into(),
                window: reprise_models::WindowIdentity {
                    role: accesskit::Role::Dialog,
                    name: Some("Log in".into()),
                },
                role: accesskit::Role::PasswordInput,
                name: None,
                states: vec![],
                rect: Rect::new(10, 10, 5, 5),
                path: vec![],
                band: vec![],
                ordinal: None,
            };
            answering.answered(Some(&element));
        });
        let mut image = RgbaImage::new(100, 100);
        assert_eq!(
            masks.apply(&mut image, screen, Some(&window(1, "Log in"))),
            1
        );
        assert_eq!(image.get_pixel(12, 12), &MASK);
        reader.join().unwrap();
    }
}
