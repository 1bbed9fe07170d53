//! The active window's accessibility tree from AT-SPI (Linux desktops: GTK,
//! Qt, Firefox, LibreOffice, egui with accesskit), read over D-Bus with the
//! blocking proxies of `atspi-proxies`, and put into the platform-neutral
//! vocabulary of `accesskit`. Only what is showing is read, within a node
//! count and a time limit, so a huge application cannot stall the recorder.

use std::time::{Duration, Instant};

use atspi_common::{CoordType, ObjectRefOwned, Role, State};
use atspi_proxies::accessible::AccessibleProxyBlocking;
use atspi_proxies::bus::BusProxyBlocking;
use atspi_proxies::component::ComponentProxyBlocking;
use reprise_models::{A11yNode, A11yTree, Rect};
use zbus::blocking::Connection;
use zbus::proxy::CacheProperties;

/// How much of a tree is read.
#[derive(Debug, Clone, Copy)]
pub struct TreeLimits {
    pub max_nodes: usize,
    pub max_time: Duration,
}

impl Default for TreeLimits {
    fn default() -> Self {
        TreeLimits {
            max_nodes: 3000,
            max_time: Duration::from_secs(2),
        }
    }
}

/// A connection to the accessibility bus, kept for repeated reads.
pub struct A11yReader {
    bus: Connection,
}

impl std::fmt::Debug for A11yReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A11yReader").finish_non_exhaustive()
    }
}

fn err(what: &str) -> impl Fn(zbus::Error) -> String + '_ {
    move |error| format!("{what}: {error}")
}

impl A11yReader {
    /// Connects to the accessibility bus of this D-Bus session.
    pub fn connect() -> Result<A11yReader, String> {
        let session = Connection::session().map_err(err("connect to the D-Bus session"))?;
        let address = BusProxyBlocking::new(&session)
            .and_then(|bus| bus.get_address())
            .map_err(err("ask for the accessibility bus"))?;
        let bus = zbus::blocking::connection::Builder::address(address.as_str())
            .and_then(|builder| builder.build())
            .map_err(err("connect to the accessibility bus"))?;
        Ok(A11yReader { bus })
    }

    /// A proxy of one interface (`P`) of the object at `path` of the bus
    /// client `name`, reading properties afresh on every call.
    fn proxy<P>(&self, name: &str, path: &str) -> zbus::Result<P>
    where
        P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
    {
        zbus::blocking::proxy::Builder::<P>::new(&self.bus)
            .destination(name.to_owned())?
            .path(path.to_owned())?
            .cache_properties(CacheProperties::No)
            .build()
    }

    /// A proxy of one interface of an object another object referred to.
    fn proxy_of<P>(&self, at: &ObjectRefOwned) -> Result<P, String>
    where
        P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
    {
        let name = at
            .name_as_str()
            .ok_or("an accessible object without a bus name")?;
        self.proxy(name, at.path_as_str())
            .map_err(err("reach an accessible object"))
    }

    fn accessible(&self, at: &ObjectRefOwned) -> Result<AccessibleProxyBlocking<'static>, String> {
        self.proxy_of(at)
    }

    /// The tree of the top-level window titled `title` of the application
    /// with process id `pid` (any application when `None`), or `None` when no
    /// application exposes such a window.
    pub fn window_tree(
        &self,
        pid: Option<u32>,
        title: &str,
        limits: TreeLimits,
    ) -> Result<Option<A11yTree>, String> {
        let registry: AccessibleProxyBlocking = self
            .proxy("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
            .map_err(err("reach the accessibility registry"))?;
        let dbus = zbus::blocking::fdo::DBusProxy::new(&self.bus)
            .map_err(err("reach the accessibility bus daemon"))?;
        let apps = registry
            .get_children()
            .map_err(err("list the accessible applications"))?;
        for app in apps {
            if let Some(pid) = pid {
                let Some(name) = app.name_as_str() else {
                    continue;
                };
                let Ok(bus_name) = zbus::names::BusName::try_from(name) else {
                    continue;
                };
                if dbus.get_connection_unix_process_id(bus_name).ok() != Some(pid) {
                    continue;
                }
            }
            let Ok(app) = self.accessible(&app) else {
                continue;
            };
            let Ok(frames) = app.get_children() else {
                continue;
            };
            // The frame named as the window; else the active one (GTK's
            // windows with a header bar have no accessible name); else the
            // only one showing.
            let mut showing = Vec::new();
            for frame in frames {
                let Ok(proxy) = self.accessible(&frame) else {
                    continue;
                };
                let states = proxy.get_state().unwrap_or_default();
                if proxy.name().is_ok_and(|name| name == title) || states.contains(State::Active) {
                    return Ok(Some(self.read_tree(frame, limits)));
                }
                if states.contains(State::Showing) {
                    showing.push(frame);
                }
            }
            if showing.len() == 1 {
                return Ok(showing.pop().map(|frame| self.read_tree(frame, limits)));
            }
        }
        Ok(None)
    }

    /// Reads the tree under `root`, breadth first, skipping what is not
    /// showing, until the limits.
    fn read_tree(&self, root: ObjectRefOwned, limits: TreeLimits) -> A11yTree {
        let started = Instant::now();
        let deadline = started + limits.max_time;
        // Every node read, and for each its children's places in `nodes`
        // once they are read (an unread child is left out).
        let mut nodes: Vec<A11yNode> = Vec::new();
        let mut queue = std::collections::VecDeque::from([(root, None::<usize>)]);
        while let Some((at, parent)) = queue.pop_front() {
            if nodes.len() >= limits.max_nodes || Instant::now() >= deadline {
                break;
            }
            let Ok(proxy) = self.accessible(&at) else {
                continue;
            };
            let Ok(states) = proxy.get_state() else {
                continue;
            };
            if parent.is_some() && !states.contains(State::Showing) {
                continue;
            }
            let role = proxy.get_role().unwrap_or(Role::Unknown);
            let name = proxy.name().ok().filter(|name| !name.is_empty());
            let rect = self
                .proxy_of::<ComponentProxyBlocking>(&at)
                .ok()
                .and_then(|component| component.get_extents(CoordType::Screen).ok())
                .and_then(|(x, y, width, height)| {
                    // Hidden widgets report about -2^31.
                    (width > 0 && height > 0 && x > -100_000 && y > -100_000)
                        .then(|| Rect::new(x, y, width as u32, height as u32))
                });
            let idx = nodes.len();
            nodes.push(A11yNode {
                role: accesskit_role(role),
                name,
                rect,
                children: Vec::new(),
            });
            if let Some(parent) = parent {
                nodes[parent].children.push(idx as u32);
            }
            for child in proxy.get_children().unwrap_or_default() {
                queue.push_back((child, Some(idx)));
            }
        }
        tracing::debug!(
            nodes = nodes.len(),
            ms = started.elapsed().as_millis(),
            "read an accessibility tree"
        );
        A11yTree { root: 0, nodes }
    }
}

/// AT-SPI's role in accesskit's vocabulary (`Unknown` where it has no match).
pub fn accesskit_role(role: Role) -> accesskit::Role {
    use accesskit::Role as A;
    match role {
        Role::Button | Role::PushButtonMenu | Role::ToggleButton => A::Button,
        Role::CheckBox => A::CheckBox,
        Role::RadioButton => A::RadioButton,
        Role::ComboBox => A::ComboBox,
        Role::Text | Role::Entry => A::TextInput,
        Role::PasswordText => A::PasswordInput,
        Role::SpinButton => A::SpinButton,
        Role::Slider => A::Slider,
        Role::Link => A::Link,
        Role::Label | Role::Static | Role::Caption => A::Label,
        Role::Heading => A::Heading,
        Role::Paragraph => A::Paragraph,
        Role::Image | Role::Icon | Role::DesktopIcon => A::Image,
        Role::Menu => A::Menu,
        Role::MenuBar => A::MenuBar,
        Role::MenuItem | Role::TearoffMenuItem => A::MenuItem,
        Role::CheckMenuItem => A::MenuItemCheckBox,
        Role::RadioMenuItem => A::MenuItemRadio,
        Role::PopupMenu => A::MenuListPopup,
        Role::List => A::List,
        Role::ListBox => A::ListBox,
        Role::ListItem => A::ListItem,
        Role::PageTab => A::Tab,
        Role::PageTabList => A::TabList,
        Role::Table | Role::TreeTable => A::Table,
        Role::TableRow => A::Row,
        Role::TableCell => A::Cell,
        Role::TableColumnHeader | Role::ColumnHeader => A::ColumnHeader,
        Role::TableRowHeader | Role::RowHeader => A::RowHeader,
        Role::Tree => A::Tree,
        Role::TreeItem => A::TreeItem,
        Role::ToolBar => A::Toolbar,
        Role::ToolTip => A::Tooltip,
        Role::StatusBar => A::Status,
        Role::ProgressBar => A::ProgressIndicator,
        Role::LevelBar => A::Meter,
        Role::ScrollBar => A::ScrollBar,
        Role::ScrollPane | Role::Viewport => A::ScrollView,
        Role::Separator => A::Splitter,
        Role::Frame | Role::Window | Role::InternalFrame => A::Window,
        Role::Dialog | Role::FileChooser | Role::ColorChooser | Role::FontChooser => A::Dialog,
        Role::Alert | Role::Notification | Role::InfoBar => A::Alert,
        Role::Panel | Role::Filler | Role::Section | Role::Grouping | Role::Form => A::Group,
        Role::SplitPane | Role::LayeredPane | Role::RootPane | Role::GlassPane => A::Pane,
        Role::DocumentFrame
        | Role::DocumentText
        | Role::DocumentWeb
        | Role::DocumentEmail
        | Role::DocumentSpreadsheet
        | Role::DocumentPresentation => A::Document,
        Role::Application => A::Application,
        Role::Terminal => A::Terminal,
        Role::Canvas | Role::DrawingArea => A::Canvas,
        Role::TitleBar => A::TitleBar,
        Role::Header => A::Header,
        Role::Footer => A::Footer,
        Role::Article => A::Article,
        Role::Timer => A::Timer,
        _ => A::Unknown,
    }
}
