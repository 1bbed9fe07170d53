//! A window's accessibility tree as the recorder reads it: its boxes on
//! the screen, without the text its fields hold (never read while
//! recording), but for the one read a person asks for when they mark a
//! task's outcome.

use super::ActiveWindow;
#[cfg(target_os = "linux")]
use super::a11y;

/// Reads a window's accessibility tree.
pub type WindowTreeReader =
    Box<dyn FnMut(&ActiveWindow) -> Option<reprise_models::A11yTree> + Send>;

/// A reader of windows' accessibility trees where the platform exposes them
/// (AT-SPI on Linux, when a D-Bus session and its accessibility bus are
/// there); `None` elsewhere (macOS and Windows are not read yet). It connects
/// on first use, on the caller's thread, so a slow or absent bus never
/// delays the start of a recording.
pub fn window_tree_reader() -> Option<WindowTreeReader> {
    #[cfg(target_os = "linux")]
    {
        let mut reader: Option<Result<a11y::A11yReader, ()>> = None;
        Some(Box::new(move |window: &ActiveWindow| {
            let connected = reader.get_or_insert_with(|| {
                a11y::A11yReader::connect()
                    .map_err(|err| tracing::info!("no accessibility trees: {err}"))
            });
            screen_tree(
                connected.as_ref().ok()?,
                window,
                a11y::TreeLimits::default(),
            )
        }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// `window`'s tree with the text its editable fields hold (never a
/// password field's), read once on its own connection: what a person
/// marked as a task's outcome shows. `None` where the platform exposes no
/// tree or the window's cannot be read or put on the screen.
pub fn window_tree_with_values(window: &ActiveWindow) -> Option<reprise_models::A11yTree> {
    #[cfg(target_os = "linux")]
    {
        let reader = a11y::A11yReader::connect()
            .map_err(|err| tracing::info!("no accessibility tree for the mark: {err}"))
            .ok()?;
        let limits = a11y::TreeLimits {
            values: true,
            ..Default::default()
        };
        screen_tree(&reader, window, limits)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = window;
        None
    }
}

/// A window's tree with its boxes in logical screen coordinates.
#[cfg(target_os = "linux")]
pub(super) fn screen_tree(
    reader: &a11y::A11yReader,
    window: &ActiveWindow,
    limits: a11y::TreeLimits,
) -> Option<reprise_models::A11yTree> {
    match reader.window_tree(window.pid, &window.title, limits) {
        Ok(tree) => tree.and_then(|(mut tree, surface)| {
            let frame = tree.nodes.first().and_then(|root| root.rect);
            if let Some(frame) = frame {
                // No mapping puts the boxes on the screen: no tree, rather
                // than boxes that name other elements than the screen shows.
                let mapping = a11y::mapping_between(frame, window.rect, surface)?;
                a11y::to_screen(&mut tree, mapping);
            }
            Some(tree)
        }),
        Err(err) => {
            tracing::debug!(title = %window.title, "no accessibility tree: {err}");
            None
        }
    }
}
