//! The live desktop behind the strategies' `Desktop` port: xcap frames, the
//! X11 window probe and enigo injection.

use reprise_models::{A11yTree, ScreenGeometry, WindowState};
use reprise_strategies::desktop::TreeRequest;
use reprise_strategies::{Action, Desktop, DesktopError, Frame};

use super::LastMove;
use crate::platform::capture::ScreenCapture;
use crate::platform::inject::Injector;
use crate::platform::{HeldInput, TreeFinder, WindowProbe};

/// The time between a secret's characters (its recorded keys are not its
/// value's: the value is typed at this even pace).
const SECRET_PACE: std::time::Duration = std::time::Duration::from_millis(30);

pub struct LiveDesktop {
    capture: ScreenCapture,
    probe: WindowProbe,
    /// `None` in a dry run: nothing can be injected.
    injector: Option<Injector>,
    last_move: LastMove,
    trees: Option<TreeFinder>,
    /// Names the element at a point (the re-check just before a press), in
    /// the top-level window under the pointer (a popup's too).
    elements: Option<crate::platform::ElementReader>,
    under_pointer: Box<dyn FnMut() -> Option<crate::platform::UnderPointer> + Send>,
    /// The values `Action::TypeSecret` types: they go from here to the
    /// injector's keystrokes and nowhere else.
    secrets: super::secrets::SecretValues,
    /// The password fields of the newest tree read, to mask in stored frames.
    secret_fields: SecretFields,
}

/// Password fields' boxes, shared with whoever stores the frames.
pub type SecretFields = std::sync::Arc<std::sync::Mutex<Vec<reprise_models::Rect>>>;

reprise_models::debug_showing!(LiveDesktop, screen: |it| it.capture.geometry());

impl LiveDesktop {
    pub fn connect(dry_run: bool) -> anyhow::Result<LiveDesktop> {
        let capture = ScreenCapture::desktop()?;
        let probe = WindowProbe::connect()?;
        let injector = if dry_run {
            None
        } else {
            Some(Injector::new(capture.geometry().scale_factor)?)
        };
        Ok(LiveDesktop {
            capture,
            probe,
            injector,
            last_move: LastMove::default(),
            trees: crate::platform::tree_finder(),
            elements: crate::platform::element_reader(),
            under_pointer: Box::new(crate::platform::window_under_pointer()),
            secrets: super::secrets::SecretValues::default(),
            secret_fields: SecretFields::default(),
        })
    }

    /// Whether a window of the application `class` (its WM_CLASS on X11)
    /// is open.
    pub fn has_window_of(&self, class: &str) -> Result<bool, crate::platform::PlatformError> {
        Ok(self
            .probe
            .client_windows()?
            .iter()
            .any(|window| window.app_class == class))
    }

    /// The secret values this desktop types.
    pub fn set_secrets(&mut self, secrets: super::secrets::SecretValues) {
        self.secrets = secrets;
    }

    /// Makes sure nothing is held down before the replay injects anything:
    /// input another program left held would change every key and click.
    /// With `release`, what is held is released (the person asked for it);
    /// without, the replay is refused, naming it.
    pub fn check_nothing_held(&mut self, release: bool) -> anyhow::Result<()> {
        let Some(injector) = self.injector.as_mut() else {
            return Ok(());
        };
        let held = self.probe.held_input()?;
        if held.is_empty() {
            return Ok(());
        }
        let names = HeldInput::names(&held);
        if !release {
            anyhow::bail!(crate::settings::errors::UsageError(format!(
                "{names} held down on this display before the replay (another program, or a key left stuck): every key and click would be changed by it; release it, or replay with --release-held-keys"
            )));
        }
        injector.release_stale(&held)?;
        let still = self.probe.held_input()?;
        if !still.is_empty() {
            anyhow::bail!(
                "{} still held down after releasing it: it is held on another device; release it there",
                HeldInput::names(&still)
            );
        }
        tracing::warn!("released {names}, held down before the replay (--release-held-keys)");
        Ok(())
    }

    pub fn screen(&self) -> ScreenGeometry {
        self.capture.geometry()
    }

    /// The password fields of the trees this desktop reads, as they are read.
    pub fn secret_fields(&self) -> SecretFields {
        SecretFields::clone(&self.secret_fields)
    }

    pub fn last_move(&self) -> LastMove {
        LastMove::clone(&self.last_move)
    }
}

/// `err`, or [`DesktopError::Gone`] when the display no longer answers (a
/// new connection and one question): the replay then stops at once, saying
/// so, rather than trying the step again against nothing.
fn or_gone(err: DesktopError) -> DesktopError {
    if crate::platform::display_gone() {
        DesktopError::Gone(err.to_string())
    } else {
        err
    }
}

impl Desktop for LiveDesktop {
    fn screenshot(&mut self) -> Result<Frame, DesktopError> {
        let image = self
            .capture
            .capture()
            .map_err(|err| or_gone(DesktopError::capture(err)))?;
        Ok(Frame {
            image,
            screen: self.capture.geometry(),
        })
    }

    fn active_window(&mut self) -> Result<Option<WindowState>, DesktopError> {
        let window = self
            .probe
            .active_window()
            .map_err(|err| or_gone(DesktopError::window(err)))?;
        Ok(window.map(|window| window.into_state(0, 0.0)))
    }

    fn active_window_id(&mut self) -> Result<Option<u64>, DesktopError> {
        self.probe
            .active_window_id()
            .map_err(|err| or_gone(DesktopError::window(err)))
    }

    fn element_at(
        &mut self,
        point: (f64, f64),
    ) -> Result<Option<reprise_models::ElementIdentity>, DesktopError> {
        // Asked once the pointer is at the point: the top-level window
        // under it (a popup, which the window manager does not list, too)
        // is the one hit-tested, as the recorder does.
        let under = (self.under_pointer)().map(|under| under.window);
        Ok(self
            .elements
            .as_mut()
            .and_then(|read| read(point, under))
            .map(|found| found.element))
    }

    fn popups(&mut self) -> Result<Vec<reprise_models::Rect>, DesktopError> {
        self.probe
            .popups()
            .map_err(|err| or_gone(DesktopError::window(err)))
    }

    fn window_listed(&mut self, window_id: u64) -> Result<Option<bool>, DesktopError> {
        let listed = self
            .probe
            .client_ids()
            .map_err(|err| or_gone(DesktopError::window(err)))?;
        Ok(Some(listed.iter().any(|&id| u64::from(id) == window_id)))
    }

    fn accessibility_tree(
        &mut self,
        request: &TreeRequest,
    ) -> Result<Option<A11yTree>, DesktopError> {
        let tree = match &mut self.trees {
            Some(find) => find(
                &request.app,
                &request.window,
                if request.whole_lists {
                    crate::platform::WholeLists::Whole
                } else {
                    crate::platform::WholeLists::Showing
                },
            )
            .map_err(DesktopError::window)?,
            None => None,
        };
        if let (Some(tree), Ok(mut fields)) = (&tree, self.secret_fields.lock()) {
            *fields = tree
                .nodes
                .iter()
                .filter(|node| reprise_models::element::is_secret_field(node.role))
                .filter_map(|node| node.rect)
                .collect();
        }
        Ok(tree)
    }

    fn inject(&mut self, action: &Action) -> Result<(), DesktopError> {
        let Some(injector) = &mut self.injector else {
            return Err(DesktopError::inject(
                "this is a dry run: nothing is injected",
            ));
        };
        if let Action::MoveTo { x, y } = action
            && let Ok(mut last_move) = self.last_move.lock()
        {
            *last_move = Some((*x, *y));
        }
        if let Action::TypeSecret { name } = action {
            let value = self.secrets.get(name).ok_or_else(|| {
                DesktopError::inject(format!("no value was given for the secret {{{name}}}"))
            })?;
            return injector
                .type_text(value, SECRET_PACE)
                .map_err(|err| or_gone(DesktopError::inject(err)));
        }
        injector
            .inject(action)
            .map_err(|err| or_gone(DesktopError::inject(err)))
    }

    fn release_all(&mut self) -> Result<(), DesktopError> {
        match &mut self.injector {
            Some(injector) => injector.release_all().map_err(DesktopError::inject),
            None => Ok(()),
        }
    }
}
