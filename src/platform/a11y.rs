//! The active window's accessibility tree from AT-SPI (Linux desktops: GTK,
//! Qt, Firefox, LibreOffice, egui with accesskit), read over D-Bus with the
//! proxies of `atspi-proxies` (blocking, except a tree's nodes, which are
//! asked in a pipeline: `pipelined.rs`), and put into the platform-neutral
//! vocabulary of `accesskit`. Only what is showing is read, within a node
//! count and a time limit, so a huge application cannot stall the recorder.

mod bounded;
mod coordinates;
mod hit;
mod pipelined;
mod roles;
mod surface;

use std::time::{Duration, Instant};

use atspi_common::{ObjectRefOwned, Role, State, StateSet};
use atspi_proxies::accessible::AccessibleProxyBlocking;
use atspi_proxies::bus::BusProxyBlocking;
use reprise_models::{A11yNode, A11yTree, Rect, WindowIdentity};

pub use bounded::MAX_CHILDREN_READ;
use coordinates::unix_socket_path;
pub use coordinates::{
    Mapping, decorated_box, mapping_between, same_box, scale_between, scale_by_geometry, to_screen,
};
use pipelined::Wanted;
pub use roles::accesskit_role;
use roles::element_states;
use zbus::blocking::Connection;
use zbus::proxy::CacheProperties;

/// How much of a tree is read.
#[derive(Debug, Clone, Copy)]
pub struct TreeLimits {
    pub max_nodes: usize,
    pub max_time: Duration,
    /// Whether the text editable fields hold is read (replay's check of
    /// what keys typed; the recorder reads it only at a marked outcome).
    pub values: bool,
    /// Whether a list that manages its descendants is read whole (up to
    /// [`MAX_CHILDREN_READ`] children) rather than as far as it shows once
    /// it has more than 128.
    pub whole_lists: bool,
}

impl Default for TreeLimits {
    fn default() -> Self {
        TreeLimits {
            max_nodes: 3000,
            max_time: Duration::from_secs(2),
            values: false,
            whole_lists: false,
        }
    }
}

/// How many nodes of a level are read between two checks of the tree's
/// limits.
const PIPELINED_NODES: usize = 256;

/// The longest text read from a field; a longer one is not read.
const MAX_VALUE_CHARS: i32 = 10_000;

/// No method call waits longer than this for an application's answer: one
/// that does not answer in time is treated as exposing nothing.
const METHOD_TIMEOUT: Duration = Duration::from_millis(500);

/// A connection to the accessibility bus, kept for repeated reads.
pub struct A11yReader {
    bus: Connection,
    /// The chain from a window down to the element the last press named
    /// (hit-testing's), with its nodes in the toolkit's coordinates.
    last_press: std::sync::Mutex<Option<(Vec<ObjectRefOwned>, Vec<A11yNode>)>>,
    /// Whether each application (by bus name) reports its boxes relative to
    /// its window's surface, asked once.
    surfaces: std::sync::Mutex<std::collections::HashMap<String, bool>>,
}

reprise_models::debug_showing!(A11yReader);

/// Why the accessibility bus could not be read.
#[derive(Debug, thiserror::Error)]
pub enum A11yError {
    #[error("{what}: {source}")]
    Bus {
        what: &'static str,
        source: Box<zbus::Error>,
    },
    #[error("connect to the accessibility bus at {}: {source}", path.display())]
    Socket {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("an accessible object without a bus name")]
    Unnamed,
}

fn err(what: &'static str) -> impl Fn(zbus::Error) -> A11yError {
    move |source| A11yError::Bus {
        what,
        source: Box::new(source),
    }
}

impl A11yReader {
    /// Connects to the accessibility bus of this D-Bus session.
    pub fn connect() -> Result<A11yReader, A11yError> {
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
                .map_err(|source| A11yError::Socket {
                    path: path.clone(),
                    source,
                })?,
            None => zbus::blocking::connection::Builder::address(address.as_str())
                .map_err(err("connect to the accessibility bus"))?,
        };
        let bus = builder
            .method_timeout(METHOD_TIMEOUT)
            .build()
            .map_err(err("connect to the accessibility bus"))?;
        Ok(A11yReader {
            bus,
            last_press: std::sync::Mutex::new(None),
            surfaces: std::sync::Mutex::default(),
        })
    }

    /// A proxy of one interface (`P`) of the object at `path` of the bus
    /// client `name`, reading properties afresh on every call; none of an
    /// application that is backed off (it missed a deadline).
    fn proxy<P>(&self, name: &str, path: &str) -> zbus::Result<P>
    where
        P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
    {
        if bounded::is_backed_off(name) {
            return Err(zbus::Error::Failure(format!(
                "{name} is backed off: it missed a deadline"
            )));
        }
        zbus::blocking::proxy::Builder::<P>::new(&self.bus)
            .destination(name.to_owned())?
            .path(path.to_owned())?
            .cache_properties(CacheProperties::No)
            .build()
    }

    /// A proxy of one interface of an object another object referred to.
    fn proxy_of<P>(&self, at: &ObjectRefOwned) -> Result<P, A11yError>
    where
        P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
    {
        let name = at.name_as_str().ok_or(A11yError::Unnamed)?;
        self.proxy(name, at.path_as_str())
            .map_err(err("reach an accessible object"))
    }

    fn accessible(
        &self,
        at: &ObjectRefOwned,
    ) -> Result<AccessibleProxyBlocking<'static>, A11yError> {
        self.proxy_of(at)
    }

    /// The tree of the top-level window titled `title` of the application
    /// with process id `pid` (any application when `None`), or `None` when no
    /// application exposes such a window; with whether its toolkit reports
    /// boxes relative to the window's surface.
    pub fn window_tree(
        &self,
        pid: Option<u32>,
        title: &str,
        limits: TreeLimits,
    ) -> Result<Option<(A11yTree, bool)>, A11yError> {
        for (app_name, app_ref) in self.applications(pid)? {
            let Ok(app) = self.accessible(&app_ref) else {
                continue;
            };
            let surface = self.is_surface_relative(&app_ref);
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
                    return Ok(Some((
                        self.read_app_tree(&app_name, frame, limits),
                        surface,
                    )));
                }
                if states.contains(State::Showing) {
                    showing.push(frame);
                }
            }
            if showing.len() == 1 {
                return Ok(showing
                    .pop()
                    .map(|frame| (self.read_app_tree(&app_name, frame, limits), surface)));
            }
        }
        Ok(None)
    }

    /// Reads the tree under `root`, breadth first, skipping what is not
    /// showing, until the limits: from the application's cache where it
    /// has one (the boxes then asked in a pipeline), else node by node.
    fn read_tree(&self, root: ObjectRefOwned, limits: TreeLimits) -> A11yTree {
        let started = Instant::now();
        let deadline = started + limits.max_time;
        let mut walk = Walk::default();
        match self.cached_tree(&root, limits.max_nodes) {
            Some(cached) => self.start_from_cache(&mut walk, cached, limits.whole_lists),
            None => walk.queue.push_back((root, None::<usize>, Wanted::Root)),
        }
        // Breadth first, a level (or a batch of it) at a time.
        while !walk.queue.is_empty()
            && walk.nodes.len() < limits.max_nodes
            && Instant::now() < deadline
        {
            let take = walk
                .queue
                .len()
                .min(limits.max_nodes - walk.nodes.len())
                .min(PIPELINED_NODES);
            self.read_batch(&mut walk, take);
        }
        if limits.values {
            for (node, at) in walk.nodes.iter_mut().zip(&walk.objects) {
                node.value = self.field_value(at, node);
            }
        }
        let mut tree = A11yTree {
            app: String::new(),
            root: 0,
            nodes: walk.nodes,
        };
        for (container, rows) in &walk.unplaced {
            reprise_models::element::place_offscreen(&mut tree, *container as u32, rows);
        }
        let repaired = tree.repair_displaced();
        tracing::debug!(
            nodes = tree.nodes.len(),
            repaired,
            ms = started.elapsed().as_millis(),
            "read an accessibility tree"
        );
        tree
    }

    /// The tree as the application's cache holds it, in `walk`; where the
    /// cache leaves children out (a container that manages them), they are
    /// queued to be read one by one: those that show of a long list, or all
    /// of them where `whole_lists`.
    fn start_from_cache(&self, walk: &mut Walk, cached: pipelined::CachedTree, whole_lists: bool) {
        let boxes = self.boxes(&cached.nodes);
        for (idx, (read, rect)) in cached.nodes.into_iter().zip(boxes).enumerate() {
            walk.nodes.push(A11yNode { rect, ..read.node });
            walk.objects.push(read.at);
            if let Some(parent) = read.parent {
                walk.nodes[parent].children.push(idx as u32);
            }
        }
        for idx in cached.incomplete {
            let Ok(proxy) = self.accessible(&walk.objects[idx]) else {
                continue;
            };
            let children = if whole_lists {
                self.children(&walk.objects[idx], &proxy)
            } else {
                self.managed_children(&walk.objects[idx], &proxy)
            };
            for child in children {
                walk.queue.push_back((child, Some(idx), Wanted::InList));
            }
        }
    }

    /// Reads the next `take` nodes of `walk`'s queue in one pipelined batch,
    /// queueing their children.
    fn read_batch(&self, walk: &mut Walk, take: usize) {
        let level: Vec<(ObjectRefOwned, Option<usize>, Wanted)> =
            walk.queue.drain(..take).collect();
        let asked: Vec<(ObjectRefOwned, Wanted)> = level
            .iter()
            .map(|(at, _, wanted)| (at.clone(), *wanted))
            .collect();
        for ((at, parent, _), read) in level.into_iter().zip(self.read_nodes(&asked)) {
            let Some(read) = read else {
                continue;
            };
            let idx = walk.nodes.len();
            walk.nodes.push(read.node);
            if let Some(parent) = parent {
                walk.nodes[parent].children.push(idx as u32);
                if read.unplaced {
                    match walk
                        .unplaced
                        .iter_mut()
                        .find(|(container, _)| *container == parent)
                    {
                        Some((_, rows)) => rows.push(idx as u32),
                        None => walk.unplaced.push((parent, vec![idx as u32])),
                    }
                }
            }
            let children = match read.children {
                pipelined::Children::Listed(children) => children,
                pipelined::Children::Large => match self.accessible(&at) {
                    Ok(proxy) => self.children(&at, &proxy),
                    Err(_) => Vec::new(),
                },
            };
            walk.queue.extend(
                children
                    .into_iter()
                    .map(|child| (child, Some(idx), Wanted::Showing)),
            );
            walk.objects.push(at);
        }
    }
}

/// A tree being read: every node read and the object each was read from
/// (a node's children are its children's places in `nodes` once they are
/// read: an unread child is left out), the objects still to read (each with
/// its parent's place and what is wanted of it), and the containers whose
/// rows out of view come without a place, with those rows.
#[derive(Default)]
struct Walk {
    nodes: Vec<A11yNode>,
    objects: Vec<ObjectRefOwned>,
    queue: std::collections::VecDeque<(ObjectRefOwned, Option<usize>, Wanted)>,
    unplaced: Vec<(usize, Vec<u32>)>,
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
        self.timed(at, || self.read_node(at, proxy, is_root))
    }

    /// The text an editable text field holds (never a password field's),
    /// through the Text interface: one request for its length, one for
    /// its text, none when it is longer than [`MAX_VALUE_CHARS`].
    fn field_value(&self, at: &ObjectRefOwned, node: &A11yNode) -> Option<String> {
        use accesskit::Role as Kind;
        let field = matches!(
            node.role,
            Kind::TextInput | Kind::MultilineTextInput | Kind::SearchInput
        ) && node
            .states
            .contains(&reprise_models::ElementState::Editable);
        if !field {
            return None;
        }
        let text = self
            .proxy_of::<atspi_proxies::text::TextProxyBlocking>(at)
            .ok()?;
        self.timed(at, || {
            let count = text.character_count().ok()?;
            (0..=MAX_VALUE_CHARS)
                .contains(&count)
                .then(|| text.get_text(0, count).ok())
                .flatten()
        })
    }

    /// The accessible applications whose process is `pid` (all when `None`),
    /// with their names.
    fn applications(&self, pid: Option<u32>) -> Result<Vec<(String, ObjectRefOwned)>, A11yError> {
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
            // The first request to each application: one that does not
            // answer in time is backed off here, before anything else is
            // asked of it.
            let name = self.timed(&app, || proxy.name());
            if let Ok(name) = name {
                found.push((name, app));
            }
        }
        Ok(found)
    }

    /// The tree of the showing window `window` of the application named
    /// `app` (the one with the window's name, else the only showing one), in
    /// its toolkit's coordinates, with the application's process id and
    /// whether its toolkit reports boxes relative to the window's surface.
    pub fn tree_of(
        &self,
        app: &str,
        window: &WindowIdentity,
        limits: TreeLimits,
    ) -> Result<Option<(A11yTree, Option<u32>, bool)>, A11yError> {
        let started = Instant::now();
        let dbus = zbus::blocking::fdo::DBusProxy::new(&self.bus)
            .map_err(err("reach the accessibility bus daemon"))?;
        let applications = self.applications(None)?;
        tracing::debug!(
            count = applications.len(),
            ms = started.elapsed().as_millis(),
            "listed the accessible applications"
        );
        for (app_name, app_ref) in applications {
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
            let surface = self.is_surface_relative(&app_ref);
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
                    return Ok(Some((
                        self.read_app_tree(&app_name, frame, limits),
                        pid,
                        surface,
                    )));
                }
                let role = accesskit_role(proxy.get_role().unwrap_or(Role::Unknown));
                showing.push((frame, role, name));
            }
            if let Some(only) = frame_not_named_as_recorded(&showing, window) {
                let frame = showing.swap_remove(only).0;
                return Ok(Some((
                    self.read_app_tree(&app_name, frame, limits),
                    pid,
                    surface,
                )));
            }
        }
        Ok(None)
    }
}

/// Which of an application's showing frames (each with its role and name)
/// is `window` when none has its name: for a named window, the only one
/// whose name differs by the mark of unsaved changes alone (typing into an
/// editor's `Untitled` makes it `*Untitled`); for an unnamed one (GTK's
/// popup of a menu or a combo box), the only showing one of its role
/// without a name, else the only showing window at all.
fn frame_not_named_as_recorded(
    showing: &[(ObjectRefOwned, accesskit::Role, Option<String>)],
    window: &WindowIdentity,
) -> Option<usize> {
    let only = |found: Vec<usize>| (found.len() == 1).then(|| found[0]);
    if let Some(wanted) = window.name.as_deref() {
        let unmarked = reprise_models::element::unmarked_title;
        return only(
            (0..showing.len())
                .filter(|&idx| {
                    showing[idx]
                        .2
                        .as_deref()
                        .is_some_and(|name| unmarked(name) == unmarked(wanted))
                })
                .collect(),
        );
    }
    let unnamed: Vec<usize> = (0..showing.len())
        .filter(|&idx| showing[idx].1 == window.role && showing[idx].2.is_none())
        .collect();
    if unnamed.is_empty() && showing.len() == 1 {
        return Some(0);
    }
    only(unnamed)
}

impl A11yReader {
    /// The accessible application named `app`, if one is on the bus.
    pub fn application_named(&self, app: &str) -> Result<Option<ObjectRefOwned>, A11yError> {
        Ok(self
            .applications(None)?
            .into_iter()
            .find_map(|(name, object)| (name == app).then_some(object)))
    }

    /// How long `app` takes to answer one request (its root object's
    /// name, read afresh), or `None` when it did not answer within the
    /// deadline: what the person's application spends on the reader.
    pub fn answer_time(&self, app: &ObjectRefOwned) -> Option<Duration> {
        let proxy = self.accessible(app).ok()?;
        let started = Instant::now();
        proxy.name().ok()?;
        Some(started.elapsed())
    }

    /// [`Self::read_tree`], named after its application.
    fn read_app_tree(&self, app: &str, root: ObjectRefOwned, limits: TreeLimits) -> A11yTree {
        A11yTree {
            app: app.to_owned(),
            ..self.read_tree(root, limits)
        }
    }
}

/// A node as AT-SPI gives it (an empty name is none), without children.
fn node_of(role: Role, name: Option<String>, rect: Option<Rect>, states: StateSet) -> A11yNode {
    A11yNode {
        role: accesskit_role(role),
        name: name.filter(|name| !name.is_empty()),
        rect,
        states: element_states(states),
        value: None,
        children: Vec::new(),
    }
}

/// A box as extents give it, `None` where it is empty or hidden (hidden
/// widgets report about -2^31).
fn visible_box(x: i32, y: i32, width: i32, height: i32) -> Option<Rect> {
    (width > 0 && height > 0 && x > -100_000 && y > -100_000)
        .then(|| Rect::new(x, y, width as u32, height as u32))
}

fn is_null(at: &ObjectRefOwned) -> bool {
    at.is_null() || at.path_as_str() == "/org/a11y/atspi/null"
}
