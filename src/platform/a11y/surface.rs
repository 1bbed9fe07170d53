//! Toolkits whose boxes are relative to their window's surface (GTK 4
//! under X11): which applications they are, asked once each, and what their
//! states mean there.

use atspi_common::{ObjectRefOwned, State};

use super::{A11yReader, coordinates};

impl A11yReader {
    /// Whether the application `app` reports its boxes relative to its
    /// window's surface, by its toolkit's name and version (asked once per
    /// application; one that does not say is taken at its word for none).
    pub fn is_surface_relative(&self, app: &ObjectRefOwned) -> bool {
        let Some(bus_name) = app.name_as_str().map(str::to_owned) else {
            return false;
        };
        let mut surfaces = self
            .surfaces
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        *surfaces.entry(bus_name).or_insert_with(|| {
            let Ok(proxy) =
                self.proxy_of::<atspi_proxies::application::ApplicationProxyBlocking>(app)
            else {
                return false;
            };
            let (toolkit, version) = (
                proxy.toolkit_name().unwrap_or_default(),
                proxy.version().unwrap_or_default(),
            );
            tracing::debug!(%toolkit, %version, "an application's toolkit");
            coordinates::surface_relative(&toolkit, &version)
        })
    }

    /// Whether the object `at` shows when it says it is visible: its
    /// application reports boxes relative to its surface (GTK 4.8 says
    /// Showing of its windows only), as found when the application was
    /// first asked.
    pub(super) fn visible_is_showing(&self, at: &ObjectRefOwned) -> bool {
        at.name_as_str().is_some_and(|bus_name| {
            self.surfaces
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .get(bus_name)
                .copied()
                .unwrap_or(false)
        })
    }

    /// `states` of the object `at`, with Showing where it is visible and
    /// [`Self::visible_is_showing`].
    pub(super) fn as_shown(
        &self,
        at: &ObjectRefOwned,
        mut states: atspi_common::StateSet,
    ) -> atspi_common::StateSet {
        if states.contains(State::Visible) && self.visible_is_showing(at) {
            states.insert(State::Showing);
        }
        states
    }
}
