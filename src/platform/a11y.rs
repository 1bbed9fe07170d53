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
use atspi_proxies::table::TableProxyBlocking;
use reprise_models::{A11yNode, A11yTree, ElementIdentity, ElementState, Rect, WindowIdentity};
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

/// No method call waits longer than this for an application's answer: one
/// that does not answer in time is treated as exposing nothing.
const METHOD_TIMEOUT: Duration = Duration::from_millis(500);

/// A node with more children than this (a spreadsheet reports 2^31 cells, a
/// large list tens of thousands of rows) is never asked for all of them:
/// that costs the application far more than the recorder may.
pub const MAX_CHILDREN_READ: i32 = 1000;

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
        // zbus does not decode a percent-escaped socket path (a `,` in
        // XDG_RUNTIME_DIR arrives as `%2c` and is looked for literally), so
        // a plain `unix:path=` address is connected here.
        let builder = match unix_socket_path(address.as_str()) {
            Some(path) => std::os::unix::net::UnixStream::connect(&path)
                .map(zbus::blocking::connection::Builder::async_io_unix_stream)
                .map_err(|error| {
                    format!(
                        "connect to the accessibility bus at {}: {error}",
                        path.display()
                    )
                })?,
            None => zbus::blocking::connection::Builder::address(address.as_str())
                .map_err(err("connect to the accessibility bus"))?,
        };
        let bus = builder
            .method_timeout(METHOD_TIMEOUT)
            .build()
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
        for (app_name, app) in self.applications(pid)? {
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
                    return Ok(Some(self.read_app_tree(&app_name, frame, limits)));
                }
                if states.contains(State::Showing) {
                    showing.push(frame);
                }
            }
            if showing.len() == 1 {
                return Ok(showing
                    .pop()
                    .map(|frame| self.read_app_tree(&app_name, frame, limits)));
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
            let Some(node) = self.node(&at, &proxy, parent.is_none()) else {
                continue;
            };
            let idx = nodes.len();
            nodes.push(node);
            if let Some(parent) = parent {
                nodes[parent].children.push(idx as u32);
            }
            for child in self.children(&proxy) {
                queue.push_back((child, Some(idx)));
            }
        }
        tracing::debug!(
            nodes = nodes.len(),
            ms = started.elapsed().as_millis(),
            "read an accessibility tree"
        );
        A11yTree {
            app: String::new(),
            root: 0,
            nodes,
        }
    }
}

impl A11yReader {
    /// One node: its role, name, states and screen box; `None` when it is
    /// not showing (the root is kept anyway) or does not answer.
    fn node(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
        is_root: bool,
    ) -> Option<A11yNode> {
        let states = proxy.get_state().ok()?;
        if !is_root && !states.contains(State::Showing) {
            return None;
        }
        let role = proxy.get_role().unwrap_or(Role::Unknown);
        let name = proxy.name().ok().filter(|name| !name.is_empty());
        let rect = self
            .proxy_of::<ComponentProxyBlocking>(at)
            .ok()
            .and_then(|component| component.get_extents(CoordType::Screen).ok())
            .and_then(|(x, y, width, height)| {
                // Hidden widgets report about -2^31.
                (width > 0 && height > 0 && x > -100_000 && y > -100_000)
                    .then(|| Rect::new(x, y, width as u32, height as u32))
            });
        Some(A11yNode {
            role: accesskit_role(role),
            name,
            rect,
            states: element_states(states),
            children: Vec::new(),
        })
    }

    /// A node's children, unless it has more than [`MAX_CHILDREN_READ`].
    fn children(&self, proxy: &AccessibleProxyBlocking<'static>) -> Vec<ObjectRefOwned> {
        match proxy.child_count() {
            Ok(count) if count <= MAX_CHILDREN_READ => proxy.get_children().unwrap_or_default(),
            Ok(count) => {
                tracing::debug!(count, "children not read: too many");
                Vec::new()
            }
            Err(_) => Vec::new(),
        }
    }

    /// The accessible applications whose process is `pid` (all when `None`),
    /// with their names.
    fn applications(&self, pid: Option<u32>) -> Result<Vec<(String, ObjectRefOwned)>, String> {
        let registry: AccessibleProxyBlocking = self
            .proxy("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
            .map_err(err("reach the accessibility registry"))?;
        let dbus = zbus::blocking::fdo::DBusProxy::new(&self.bus)
            .map_err(err("reach the accessibility bus daemon"))?;
        let apps = registry
            .get_children()
            .map_err(err("list the accessible applications"))?;
        let mut found = Vec::new();
        for app in apps {
            if let Some(pid) = pid {
                let Some(bus_name) = app
                    .name_as_str()
                    .and_then(|name| zbus::names::BusName::try_from(name).ok())
                else {
                    continue;
                };
                if dbus.get_connection_unix_process_id(bus_name).ok() != Some(pid) {
                    continue;
                }
            }
            let Ok(proxy) = self.accessible(&app) else {
                continue;
            };
            found.push((proxy.name().unwrap_or_default(), app));
        }
        Ok(found)
    }

    /// The element under `point` (logical screen coordinates) in the
    /// windows of the application with process id `pid`: the deepest one
    /// AT-SPI's hit-testing reaches, or its nearest ancestor with an
    /// identity, with the other cells of its row or its siblings (a label).
    /// Bounded: at most 32 levels and [`MAX_CHILDREN_READ`] siblings.
    pub fn element_at(
        &self,
        window: Option<&super::ActiveWindow>,
        point: (f64, f64),
    ) -> Result<Option<ElementIdentity>, String> {
        let pid = window.and_then(|window| window.pid);
        let apps = self.applications(pid)?;
        tracing::debug!(?pid, apps = ?apps.iter().map(|(name, app)| (name, app.name_as_str())).collect::<Vec<_>>(), "hit-test");
        for (app_name, app) in apps {
            let Ok(app) = self.accessible(&app) else {
                continue;
            };
            // The smallest showing window that contains the point: a dialog
            // or a popup menu lies over the window it belongs to. Each
            // window's boxes are in its toolkit's coordinates (GTK's are the
            // screen's divided by its scale): the point is asked in those,
            // and the answer is put back into the screen's.
            let mut best: Option<(u64, f64, ObjectRefOwned, A11yNode)> = None;
            for frame in app.get_children().unwrap_or_default() {
                let Ok(proxy) = self.accessible(&frame) else {
                    continue;
                };
                let Some(node) = self.node(&frame, &proxy, false) else {
                    continue;
                };
                let Some(rect) = node.rect else {
                    continue;
                };
                let scale = window.map_or(1.0, |window| scale_between(rect, window.rect));
                if !rect.contains(point.0 / scale, point.1 / scale) {
                    continue;
                }
                let area = u64::from(rect.width) * u64::from(rect.height);
                if best
                    .as_ref()
                    .is_none_or(|(best_area, ..)| area < *best_area)
                {
                    best = Some((area, scale, frame, node));
                }
            }
            let Some((_, scale, frame, frame_node)) = best else {
                tracing::debug!(app = %app_name, "no showing window of it holds the point");
                continue;
            };
            let (x, y) = (
                (point.0 / scale).round() as i32,
                (point.1 / scale).round() as i32,
            );
            // Down the chain of hit-tested children.
            let mut nodes = vec![frame_node];
            let mut chain = vec![frame];
            for _ in 0..32 {
                let at = chain.last().expect("the chain starts with the window");
                let Ok(component) = self.proxy_of::<ComponentProxyBlocking>(at) else {
                    break;
                };
                let Ok(child) = component.get_accessible_at_point(x, y, CoordType::Screen) else {
                    break;
                };
                if is_null(&child) || child.path_as_str() == at.path_as_str() {
                    break;
                }
                let Ok(proxy) = self.accessible(&child) else {
                    break;
                };
                let Some(node) = self.node(&child, &proxy, true) else {
                    break;
                };
                let idx = nodes.len() as u32;
                nodes.last_mut().expect("a parent").children.push(idx);
                nodes.push(node);
                chain.push(child);
            }
            // The hit element is the chain's end; its neighbours come after.
            let target = nodes.len() as u32 - 1;
            if chain.len() > 1 {
                self.add_neighbours(&chain, &mut nodes);
            }
            tracing::debug!(
                chain = ?nodes[..=target as usize]
                    .iter()
                    .map(|node| (node.role, node.name.as_deref()))
                    .collect::<Vec<_>>(),
                "hit-test chain"
            );
            let mut tree = A11yTree {
                app: app_name.clone(),
                root: 0,
                nodes,
            };
            to_screen(&mut tree, scale);
            return Ok(reprise_models::identity_of(&tree, &app_name, target));
        }
        Ok(None)
    }

    /// Adds the hit element's neighbours under its parent (the last two of
    /// `chain`): the cells of its row where the parent is a table, else the
    /// parent's other children.
    fn add_neighbours(&self, chain: &[ObjectRefOwned], nodes: &mut Vec<A11yNode>) {
        let target = &chain[chain.len() - 1];
        let parent = &chain[chain.len() - 2];
        let parent_idx = nodes.len() - 2;
        let Ok(target_proxy) = self.accessible(target) else {
            return;
        };
        // Only a parent that says it is a table is asked for rows (GTK
        // logs a critical warning for a table call on anything else).
        let is_table = self.accessible(parent).is_ok_and(|proxy| {
            proxy
                .get_interfaces()
                .is_ok_and(|interfaces| interfaces.contains(atspi_common::Interface::Table))
        });
        let row_cells = is_table
            .then(|| self.proxy_of::<TableProxyBlocking>(parent).ok())
            .flatten()
            .and_then(|table| {
                let index = target_proxy.get_index_in_parent().ok()?;
                let row = table.get_row_at_index(index).ok()?;
                let n_columns = table.ncolumns().ok()?.clamp(0, 64);
                Some(
                    (0..n_columns)
                        .filter_map(|column| table.get_accessible_at(row, column).ok())
                        .collect::<Vec<_>>(),
                )
            });
        let neighbours = match row_cells {
            Some(cells) if !cells.is_empty() => cells,
            _ => match self.accessible(parent) {
                Ok(parent) => self.children(&parent),
                Err(_) => return,
            },
        };
        for neighbour in neighbours {
            if neighbour.path_as_str() == target.path_as_str() || is_null(&neighbour) {
                continue;
            }
            let Ok(proxy) = self.accessible(&neighbour) else {
                continue;
            };
            if let Some(node) = self.node(&neighbour, &proxy, false) {
                let idx = nodes.len() as u32;
                nodes[parent_idx].children.push(idx);
                nodes.push(node);
            }
        }
    }

    /// The tree of the showing window `window` of the application named
    /// `app` (the one with the window's name, else the only showing one), in
    /// its toolkit's coordinates, with the application's process id.
    pub fn tree_of(
        &self,
        app: &str,
        window: &WindowIdentity,
        limits: TreeLimits,
    ) -> Result<Option<(A11yTree, Option<u32>)>, String> {
        let dbus = zbus::blocking::fdo::DBusProxy::new(&self.bus)
            .map_err(err("reach the accessibility bus daemon"))?;
        for (app_name, app_ref) in self.applications(None)? {
            if app_name != app {
                continue;
            }
            let pid = app_ref
                .name_as_str()
                .and_then(|name| zbus::names::BusName::try_from(name).ok())
                .and_then(|name| dbus.get_connection_unix_process_id(name).ok());
            let Ok(app_proxy) = self.accessible(&app_ref) else {
                continue;
            };
            let mut showing = Vec::new();
            for frame in app_proxy.get_children().unwrap_or_default() {
                let Ok(proxy) = self.accessible(&frame) else {
                    continue;
                };
                let states = proxy.get_state().unwrap_or_default();
                if !states.contains(State::Showing) {
                    continue;
                }
                let name = proxy.name().ok().filter(|name| !name.is_empty());
                if window.name.is_some() && name == window.name {
                    return Ok(Some((self.read_app_tree(&app_name, frame, limits), pid)));
                }
                showing.push(frame);
            }
            if window.name.is_none() && showing.len() == 1 {
                return Ok(showing
                    .pop()
                    .map(|frame| (self.read_app_tree(&app_name, frame, limits), pid)));
            }
        }
        Ok(None)
    }
}

impl A11yReader {
    /// [`Self::read_tree`], named after its application.
    fn read_app_tree(&self, app: &str, root: ObjectRefOwned, limits: TreeLimits) -> A11yTree {
        A11yTree {
            app: app.to_owned(),
            ..self.read_tree(root, limits)
        }
    }
}

/// The factor from a window's accessibility boxes to the screen's logical
/// coordinates, from its accessible frame and its X window: GTK 3 reports
/// boxes divided by its scale (GDK_SCALE=2 halves them). The frame may
/// include the window manager's decorations, so the ratio is snapped to the
/// nearest usual scale.
pub fn scale_between(frame: Rect, window: Rect) -> f64 {
    if frame.width == 0 {
        return 1.0;
    }
    let ratio = f64::from(window.width) / f64::from(frame.width);
    [1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0]
        .into_iter()
        .min_by(|a, b| (a - ratio).abs().total_cmp(&(b - ratio).abs()))
        .filter(|scale| (scale - ratio).abs() / scale < 0.15)
        .unwrap_or(1.0)
}

/// Puts every box of `tree` into the screen's logical coordinates.
pub fn to_screen(tree: &mut A11yTree, scale: f64) {
    if scale != 1.0 {
        for node in &mut tree.nodes {
            node.rect = node.rect.map(|rect| rect.scaled(scale));
        }
    }
}

/// The socket of a D-Bus address `unix:path=…[,key=value…]`, with its
/// percent-escapes decoded; `None` for any other kind of address.
fn unix_socket_path(address: &str) -> Option<std::path::PathBuf> {
    let escaped = address.strip_prefix("unix:path=")?.split(',').next()?;
    let bytes = escaped.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    Some(std::path::PathBuf::from(
        <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(decoded),
    ))
}

fn is_null(at: &ObjectRefOwned) -> bool {
    at.is_null() || at.path_as_str() == "/org/a11y/atspi/null"
}

/// The AT-SPI states identity and effects depend on.
fn element_states(states: atspi_common::StateSet) -> Vec<ElementState> {
    [
        (State::Focused, ElementState::Focused),
        (State::Checked, ElementState::Checked),
        (State::Selected, ElementState::Selected),
        (State::Editable, ElementState::Editable),
        (State::Sensitive, ElementState::Sensitive),
        (State::Expanded, ElementState::Expanded),
        (State::Pressed, ElementState::Pressed),
    ]
    .into_iter()
    .filter(|(state, _)| states.contains(*state))
    .map(|(_, element_state)| element_state)
    .collect()
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

#[cfg(test)]
mod tests {
    use super::unix_socket_path;

    #[test]
    fn a_window_scale_comes_from_its_frame_and_its_x_window() {
        use reprise_models::Rect;
        // Measured on zenity under openbox: the frame holds the decorations.
        let check = |frame: Rect, window: Rect, expect: f64| {
            assert_eq!(
                super::scale_between(frame, window),
                expect,
                "{frame:?} {window:?}"
            );
        };
        check(
            Rect::new(490, 302, 302, 221),
            Rect::new(491, 322, 300, 196),
            1.0,
        );
        check(
            Rect::new(282, 90, 236, 433),
            Rect::new(565, 200, 470, 840),
            2.0,
        );
        check(Rect::new(0, 0, 400, 300), Rect::new(0, 0, 600, 450), 1.5);
        // Nothing usual: taken as it is.
        check(Rect::new(0, 0, 100, 100), Rect::new(0, 0, 900, 900), 1.0);
    }

    #[test]
    fn a_socket_path_is_decoded_from_its_address() {
        let check = |address: &str, expect: Option<&str>| {
            assert_eq!(
                unix_socket_path(address),
                expect.map(std::path::PathBuf::from),
                "{address}"
            );
        };
        check(
            "unix:path=/tmp/a%2cb/at-spi/bus_0,guid=6298",
            Some("/tmp/a,b/at-spi/bus_0"),
        );
        check(
            "unix:path=/run/user/0/at-spi/bus",
            Some("/run/user/0/at-spi/bus"),
        );
        check("unix:path=/tmp/sp%20ace", Some("/tmp/sp ace"));
        check("unix:abstract=/tmp/dbus-x", None);
        check("unix:path=/tmp/bad%zz", None);
    }
}
