//! A window's tree read without waiting for one answer before asking the
//! next. Where the application offers AT-SPI's `Cache.GetItems` (AccessKit,
//! GTK's ATK bridge for what it has handed out), one request gives every
//! cached node's role, name, states, parent and place among its siblings,
//! and the boxes are then asked in a pipeline. What the cache leaves out (a
//! container that manages its descendants says -1 children; Qt's cache is
//! empty) is read node by node, [`IN_FLIGHT`] nodes at a time, breadth
//! first. Either way a bounded batch is in flight at once, and none goes to
//! an application that missed a deadline.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Instant;

use atspi_common::{CacheItem, CoordType, Interface, ObjectRefOwned, Role, State};
use atspi_proxies::accessible::{AccessibleProxy, AccessibleProxyBlocking};
use atspi_proxies::cache::CacheProxyBlocking;
use atspi_proxies::component::ComponentProxy;
use atspi_proxies::table::TableProxy;
use futures_util::StreamExt;
use reprise_models::{A11yNode, Rect};

use super::bounded::{MAX_CHILDREN_READ, is_backed_off};
use super::{A11yReader, is_null};

/// How many requests (or nodes being read) are in flight at once: enough
/// to keep the application busy between answers, few enough that one that
/// stalls has little left to compute when the reader stops waiting.
const IN_FLIGHT: usize = 64;

/// The applications (by bus name) that answered `GetItems` with an error
/// (other than a missed deadline) or nothing: not asked again by this
/// process.
static NO_CACHE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn no_cache() -> std::sync::MutexGuard<'static, BTreeSet<String>> {
    NO_CACHE.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// A node read from the cache, with its object and its place in the tree
/// being built.
pub(super) struct CachedNode {
    pub at: ObjectRefOwned,
    pub node: A11yNode,
    pub parent: Option<usize>,
    /// Whether it has a `Component` (a box to ask for).
    pub component: bool,
}

/// What the cache gives of the tree under `root`: its showing nodes,
/// breadth first (the root kept whatever its states), and the nodes whose
/// children the cache leaves out, to be read one by one.
pub(super) struct CachedTree {
    pub nodes: Vec<CachedNode>,
    pub incomplete: Vec<usize>,
}

impl A11yReader {
    /// Every node the application of `root` caches, in one request; `None`
    /// where it offers no cache (remembered), or is backed off.
    fn cache_items(&self, root: &ObjectRefOwned) -> Option<Vec<CacheItem>> {
        let name = root.name_as_str()?;
        if no_cache().contains(name) {
            return None;
        }
        let proxy: CacheProxyBlocking = self.proxy(name, "/org/a11y/atspi/cache").ok()?;
        let started = Instant::now();
        let items = self.timed(root, || proxy.get_items());
        tracing::debug!(
            ms = started.elapsed().as_millis(),
            items = items.as_ref().map_or(0, Vec::len),
            "asked for an application's cache"
        );
        match items {
            Ok(items) if !items.is_empty() => Some(items),
            // A busy application may answer next time.
            Err(zbus::Error::InputOutput(err)) if err.kind() == std::io::ErrorKind::TimedOut => {
                None
            }
            Ok(_) | Err(_) => {
                no_cache().insert(name.to_owned());
                None
            }
        }
    }

    /// The tree under `root` as the application's cache gives it (without
    /// boxes), at most `max_nodes`; `None` where there is no cache or the
    /// root is not in it.
    pub(super) fn cached_tree(
        &self,
        root: &ObjectRefOwned,
        max_nodes: usize,
    ) -> Option<CachedTree> {
        let items = self.cache_items(root)?;
        let mut children: HashMap<&ObjectRefOwned, Vec<&CacheItem>> = HashMap::new();
        let mut root_item = None;
        for item in &items {
            if item.object == *root {
                root_item = Some(item);
            }
            if !is_null(&item.parent) {
                children.entry(&item.parent).or_default().push(item);
            }
        }
        for siblings in children.values_mut() {
            siblings.sort_by_key(|item| item.index);
        }
        let mut tree = CachedTree {
            nodes: Vec::new(),
            incomplete: Vec::new(),
        };
        let mut queue = std::collections::VecDeque::from([(root_item?, None::<usize>)]);
        while let Some((item, parent)) = queue.pop_front() {
            if tree.nodes.len() >= max_nodes {
                break;
            }
            let shown = self.as_shown(&item.object, item.states);
            if parent.is_some() && !shown.contains(State::Showing) {
                continue;
            }
            let idx = tree.nodes.len();
            tree.nodes.push(CachedNode {
                at: item.object.clone(),
                node: super::node_of(item.role, Some(item.short_name.clone()), None, item.states),
                parent,
                component: item.ifaces.contains(Interface::Component),
            });
            let cached = children.get(&item.object).map_or(&[][..], Vec::as_slice);
            // A container that manages its descendants (GTK's tree views)
            // says -1 and leaves them out.
            if usize::try_from(item.children).map_or(true, |count| count > cached.len()) {
                tree.incomplete.push(idx);
                continue;
            }
            for child in cached {
                queue.push_back((child, Some(idx)));
            }
        }
        Some(tree)
    }

    /// The screen boxes of cached `nodes` (`None` where a node has no
    /// `Component`, which is not asked, or no box, or does not answer).
    pub(super) fn boxes(&self, nodes: &[CachedNode]) -> Vec<Option<Rect>> {
        let bus = self.bus.inner();
        self.pipelined(
            nodes,
            |node| &node.at,
            |node| async move {
                if !node.component {
                    return None;
                }
                let component: ComponentProxy = proxy(bus, &node.at).await?;
                let (x, y, width, height) = component.get_extents(CoordType::Screen).await.ok()?;
                super::visible_box(x, y, width, height)
            },
        )
    }

    /// The cells of the table `at` at each `(row, column)` of `places`, in
    /// order (`None` where there is none, or no answer), asked in a
    /// pipeline.
    pub(super) fn cells_at(
        &self,
        at: &ObjectRefOwned,
        places: &[(i32, i32)],
    ) -> Vec<Option<ObjectRefOwned>> {
        let bus = self.bus.inner();
        let Some(table) = async_io::block_on(proxy::<TableProxy>(bus, at)) else {
            return vec![None; places.len()];
        };
        let table = &table;
        self.pipelined(
            places,
            |_| at,
            |&(row, column)| async move {
                let cell = table.get_accessible_at(row, column).await.ok()?;
                (!is_null(&cell)).then_some(cell)
            },
        )
    }

    /// What `ask` answers of each of `items` (to the application of the
    /// object `at` names), [`IN_FLIGHT`] at a time, in order; the rest are
    /// not asked (`None`) once that application is backed off (a batch took
    /// longer than one request may).
    fn pipelined<'a, I, T, F>(
        &self,
        items: &'a [I],
        at: impl Fn(&'a I) -> &'a ObjectRefOwned,
        ask: impl Fn(&'a I) -> F,
    ) -> Vec<Option<T>>
    where
        F: std::future::Future<Output = Option<T>>,
    {
        let mut answers = Vec::with_capacity(items.len());
        for batch in items.chunks(IN_FLIGHT) {
            let Some(first) = batch.first().map(&at) else {
                break;
            };
            if first.name_as_str().is_none_or(is_backed_off) {
                answers.resize_with(items.len(), || None);
                break;
            }
            let batch_answers: Vec<Option<T>> = self.timed(first, || {
                async_io::block_on(
                    futures_util::stream::iter(batch.iter().map(&ask))
                        .buffered(IN_FLIGHT)
                        .collect(),
                )
            });
            answers.extend(batch_answers);
        }
        answers
    }
}

/// A proxy of one interface (`P`) of the object `at`, reading properties
/// afresh.
async fn proxy<P>(bus: &zbus::Connection, at: &ObjectRefOwned) -> Option<P>
where
    P: zbus::proxy::Defaults + From<zbus::Proxy<'static>>,
{
    zbus::proxy::Builder::new(bus)
        .destination(at.name_as_str()?.to_owned())
        .ok()?
        .path(at.path_as_str().to_owned())
        .ok()?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .ok()
}

/// A node read by [`A11yReader::read_nodes`], with what it has below.
pub(super) struct ReadNode {
    pub node: A11yNode,
    pub children: Children,
    /// Its box is its size only: a row out of its list's view whose place
    /// the toolkit does not give (see `place_offscreen`).
    pub unplaced: bool,
}

pub(super) enum Children {
    /// All of them (a node has at most [`MAX_CHILDREN_READ`] read this way).
    Listed(Vec<ObjectRefOwned>),
    /// Too many to list: read through what shows of the container.
    Large,
}

/// Which nodes of a tree are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wanted {
    /// The window: read whatever its states.
    Root,
    /// A node read only when it shows.
    Showing,
    /// A row or item of a list that manages its descendants: read when it
    /// shows, and when it is only scrolled out of view (visible but not
    /// showing; then without what it holds), so that a row that does not
    /// show is known to be there (it is scrolled to, and a twin of the
    /// one that shows is seen).
    InList,
}

impl A11yReader {
    /// One node (see `node`): its states first (one that does not show
    /// is asked nothing more: a hidden menu's items are many), then its
    /// role, name and box at once, one wait for the application, not three
    /// (a hit-test reads a node a level, on the press's path).
    pub(super) fn read_node(
        &self,
        at: &ObjectRefOwned,
        accessible: &AccessibleProxyBlocking<'static>,
        is_root: bool,
    ) -> Option<A11yNode> {
        let states = self.as_shown(at, accessible.get_state().ok()?);
        if !is_root && !states.contains(State::Showing) {
            return None;
        }
        let accessible = AccessibleProxy::from(accessible.inner().inner().clone());
        let (role, name, extents) = async_io::block_on(futures_util::future::join3(
            accessible.get_role(),
            accessible.name(),
            async {
                let component: ComponentProxy = proxy(self.bus.inner(), at).await?;
                component.get_extents(CoordType::Screen).await.ok()
            },
        ));
        let role = role.unwrap_or(Role::Unknown);
        let rect =
            extents.and_then(|(x, y, width, height)| super::visible_box(x, y, width, height));
        Some(super::node_of(role, name.ok(), rect, states))
    }

    /// The nodes at `objects` (each with which of them is wanted),
    /// [`IN_FLIGHT`] at a time, in order: `None` for one not wanted or
    /// that does not answer, and for all once the application is backed
    /// off.
    pub(super) fn read_nodes(&self, objects: &[(ObjectRefOwned, Wanted)]) -> Vec<Option<ReadNode>> {
        let bus = self.bus.inner();
        self.pipelined(
            objects,
            |(at, _)| at,
            |(at, wanted)| read_node(bus, at, *wanted, self.visible_is_showing(at)),
        )
    }
}

/// One node: its states (nothing more of one not wanted), role, name,
/// screen box and children; `visible_is_showing`: its application says
/// Visible where it means Showing.
async fn read_node(
    bus: &zbus::Connection,
    at: &ObjectRefOwned,
    wanted: Wanted,
    visible_is_showing: bool,
) -> Option<ReadNode> {
    let accessible: AccessibleProxy = proxy(bus, at).await?;
    let mut states = accessible.get_state().await.ok()?;
    if visible_is_showing && states.contains(State::Visible) {
        states.insert(State::Showing);
    }
    let showing = states.contains(State::Showing);
    let read = match wanted {
        Wanted::Root => true,
        Wanted::Showing => showing,
        Wanted::InList => showing || states.contains(State::Visible),
    };
    if !read {
        return None;
    }
    let role = accessible.get_role().await.unwrap_or(Role::Unknown);
    let name = accessible.name().await.ok();
    let extents = match proxy::<ComponentProxy>(bus, at).await {
        Some(component) => component.get_extents(CoordType::Screen).await.ok(),
        None => None,
    };
    let rect = extents.and_then(|(x, y, width, height)| super::visible_box(x, y, width, height));
    // A row of a list out of its view: GTK calls it showing but puts it at
    // about -2^31, with its size; the size is kept for its place to be
    // worked out from the rows that show.
    let unplaced = match (wanted, rect, extents) {
        (Wanted::InList, None, Some((_, _, width, height))) if width > 0 && height > 0 => {
            Some(reprise_models::Rect::new(0, 0, width as u32, height as u32))
        }
        _ => None,
    };
    let offscreen = wanted == Wanted::InList && (!showing || unplaced.is_some());
    let children = match accessible.child_count().await {
        _ if offscreen => Children::Listed(Vec::new()),
        Ok(count) if count <= 0 => Children::Listed(Vec::new()),
        Ok(count) if count <= MAX_CHILDREN_READ => {
            Children::Listed(accessible.get_children().await.unwrap_or_default())
        }
        Ok(_) => Children::Large,
        Err(_) => Children::Listed(Vec::new()),
    };
    let mut node = super::node_of(role, name, unplaced.or(rect), states);
    if offscreen {
        node.states.push(reprise_models::ElementState::Offscreen);
    }
    Some(ReadNode {
        node,
        children,
        unplaced: unplaced.is_some(),
    })
}
