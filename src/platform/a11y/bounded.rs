//! What the reader may ask of an application, bounded whatever the
//! application exposes: a node's children are read in full only when there
//! are few of them; a large container (a spreadsheet reports 2^31 cells, a
//! list tens of thousands of rows) is read by what shows of it, through
//! hit-testing of its corners and its `Table` interface; and an application
//! that misses a deadline is left alone for a while.
//!
//! A request that has been sent cannot be taken back (the application
//! computes its answer even after the reader stopped waiting), so what is
//! bounded here is what is sent: every request is for a handful of objects,
//! at most a batch of them is in flight at once (`pipelined.rs`; the
//! hit-test sends one at a time), and none goes to a backed-off application.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use atspi_common::{CoordType, Interface, ObjectRefOwned};
use atspi_proxies::accessible::AccessibleProxyBlocking;
use atspi_proxies::component::ComponentProxyBlocking;
use atspi_proxies::table::TableProxyBlocking;

use super::{A11yReader, METHOD_TIMEOUT, is_null};

/// A node with more children than this is never asked for all of them
/// (`GetChildren`) nor walked by index over its whole range: only what
/// shows of it is read.
pub const MAX_CHILDREN_READ: i32 = 1000;

/// The most children of a large container read through what shows (a full
/// screen of spreadsheet cells is about 500).
const MAX_SHOWING_READ: i32 = 1000;

/// A container that manages its descendants with more children than this
/// has only those that show read (GTK 3 may call every row of a long list
/// showing, and reading them all costs five requests a cell).
const MANY_MANAGED: i32 = 128;

/// The most cells of one row read for a hit element's neighbours.
const MAX_ROW_READ: i32 = 64;

/// How long an application that missed a deadline is not asked anything.
const BACK_OFF: Duration = Duration::from_secs(30);

/// The applications (by bus name) that missed a deadline, with the end of
/// their back-off. Shared by every reader of this process: the recorder's
/// tree reader and its hit-tester ask the same applications.
static BACKED_OFF: Mutex<BTreeMap<String, Instant>> = Mutex::new(BTreeMap::new());

/// Whether the application with bus name `name` is backed off now.
pub(super) fn is_backed_off(name: &str) -> bool {
    let mut backed_off = BACKED_OFF
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    match backed_off.get(name) {
        Some(until) if Instant::now() < *until => true,
        Some(_) => {
            backed_off.remove(name);
            false
        }
        None => false,
    }
}

/// Backs off the application of `at`, logging it once per back-off.
fn back_off(at: &ObjectRefOwned, took: Duration) {
    let Some(name) = at.name_as_str() else {
        return;
    };
    let mut backed_off = BACKED_OFF
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let now = Instant::now();
    if backed_off.get(name).is_some_and(|until| now < *until) {
        return;
    }
    backed_off.insert(name.to_owned(), now + BACK_OFF);
    tracing::warn!(
        application = name,
        ms = took.as_millis(),
        "an application did not answer its accessibility requests in time: it is not asked again for {} s (frames and input are recorded as before)",
        BACK_OFF.as_secs()
    );
}

impl A11yReader {
    /// Runs `requests` (a few, to the application of `at`), and backs that
    /// application off when they took longer than one request may: at
    /// least one of them missed its deadline.
    pub(super) fn timed<T>(&self, at: &ObjectRefOwned, requests: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let answer = requests();
        let took = started.elapsed();
        if took >= METHOD_TIMEOUT {
            back_off(at, took);
        }
        answer
    }

    /// One request to the application of `at`, timed ([`Self::timed`]);
    /// not sent when that application is backed off. Loops of many
    /// requests ask each through here, so they end at the first miss.
    fn ask<T>(&self, at: &ObjectRefOwned, request: impl FnOnce() -> zbus::Result<T>) -> Option<T> {
        if at.name_as_str().is_some_and(is_backed_off) {
            return None;
        }
        self.timed(at, request).ok()
    }

    /// A node's children: all of them when there are at most
    /// [`MAX_CHILDREN_READ`], else those showing ([`Self::showing_children`]).
    pub(super) fn children(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
    ) -> Vec<ObjectRefOwned> {
        self.all_or_showing(at, proxy, MAX_CHILDREN_READ)
    }

    /// The children of a container that manages its descendants (GTK's
    /// tree view: it makes each cell's object when asked, and may call
    /// every row showing): all of them when there are at most
    /// [`MANY_MANAGED`], else those showing, what a person sees of it.
    pub(super) fn managed_children(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
    ) -> Vec<ObjectRefOwned> {
        self.all_or_showing(at, proxy, MANY_MANAGED)
    }

    /// A node's children: all of them when there are at most `most`, else
    /// those showing ([`Self::showing_children`]).
    fn all_or_showing(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
        most: i32,
    ) -> Vec<ObjectRefOwned> {
        self.children_or(at, proxy, most, |count| {
            let showing = self.showing_children(at, proxy);
            tracing::debug!(
                count,
                showing = showing.len(),
                "a large container: read what shows"
            );
            showing
        })
    }

    /// A node's children when there are at most [`MAX_CHILDREN_READ`];
    /// none of a large container.
    pub(super) fn few_children(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
    ) -> Vec<ObjectRefOwned> {
        self.children_or(at, proxy, MAX_CHILDREN_READ, |_| Vec::new())
    }

    /// A node's children when there are at most `most`, else what `large`
    /// gives for its child count.
    fn children_or(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
        most: i32,
        large: impl FnOnce(i32) -> Vec<ObjectRefOwned>,
    ) -> Vec<ObjectRefOwned> {
        match self.ask(at, || proxy.child_count()) {
            Some(count) if count <= most => {
                self.ask(at, || proxy.get_children()).unwrap_or_default()
            }
            Some(count) => large(count),
            None => Vec::new(),
        }
    }

    /// The children of a large container that show: those between the ones
    /// at its top-left and bottom-right corners. In a table, the cells of
    /// the rows and columns between (and the columns' headers); else the
    /// children by index between. At most [`MAX_SHOWING_READ`]: a table's
    /// cells asked in a pipeline, other children one by one.
    fn showing_children(
        &self,
        at: &ObjectRefOwned,
        proxy: &AccessibleProxyBlocking<'static>,
    ) -> Vec<ObjectRefOwned> {
        let (first, last) = self.corners(at);
        let is_table = self
            .ask(at, || proxy.get_interfaces())
            .is_some_and(|interfaces| interfaces.contains(Interface::Table));
        if is_table && let Ok(table) = self.proxy_of::<TableProxyBlocking>(at) {
            let (rows, columns) = self.showing_range(at, &table, first, last);
            return self.table_cells(at, &table, rows, columns);
        }
        let Some(first) = first else {
            return Vec::new();
        };
        let last = last
            .filter(|&last| last >= first)
            .unwrap_or(first + MAX_SHOWING_READ - 1)
            .min(first + MAX_SHOWING_READ - 1);
        (first..=last)
            .map_while(|index| self.ask(at, || proxy.get_child_at_index(index)))
            .filter(|child| !is_null(child))
            .collect()
    }

    /// The cells of row `row` of `table` (the object `at`) in the columns
    /// that show, the same ones a tree read sees; without the table's
    /// corners, its first columns, at most [`MAX_ROW_READ`].
    pub(super) fn row_cells(
        &self,
        at: &ObjectRefOwned,
        table: &TableProxyBlocking<'static>,
        row: i32,
    ) -> Vec<ObjectRefOwned> {
        let (first, last) = self.corners(at);
        let (_, columns) = self.showing_range(at, table, first, last);
        let columns = *columns.start()..=(*columns.end()).min(columns.start() + MAX_ROW_READ - 1);
        columns
            .filter_map(|column| self.ask(at, || table.get_accessible_at(row, column)))
            .filter(|cell| !is_null(cell))
            .collect()
    }

    /// The indexes in `at` of its children at its top-left and bottom-right
    /// corners, where a child is there (two hit-tests).
    fn corners(&self, at: &ObjectRefOwned) -> (Option<i32>, Option<i32>) {
        let Ok(component) = self.proxy_of::<ComponentProxyBlocking>(at) else {
            return (None, None);
        };
        let Some((x, y, width, height)) = self.ask(at, || component.get_extents(CoordType::Screen))
        else {
            return (None, None);
        };
        if width < 4 || height < 4 {
            return (None, None);
        }
        let index_at = |px: i32, py: i32| -> Option<i32> {
            let child = self.ask(at, || {
                component.get_accessible_at_point(px, py, CoordType::Screen)
            })?;
            if is_null(&child) || child.path_as_str() == at.path_as_str() {
                return None;
            }
            let proxy = self.accessible(&child).ok()?;
            self.ask(at, || proxy.get_index_in_parent())
        };
        (
            index_at(x + 1, y + 1),
            index_at(x + width - 2, y + height - 2),
        )
    }

    /// The rows and the columns of `table` (the object `at`) from those of
    /// its child at index `first` to those of the child at `last`: the first
    /// row or column, or the table's last, where a corner holds no cell (a
    /// header, or the space below a short list).
    fn showing_range(
        &self,
        at: &ObjectRefOwned,
        table: &TableProxyBlocking<'static>,
        first: Option<i32>,
        last: Option<i32>,
    ) -> (RangeInclusive<i32>, RangeInclusive<i32>) {
        let row_column = |index: Option<i32>| {
            let index = index?;
            let row = self
                .ask(at, || table.get_row_at_index(index))
                .filter(|&row| row >= 0)?;
            let column = self
                .ask(at, || table.get_column_at_index(index))
                .filter(|&col| col >= 0)?;
            Some((row, column))
        };
        let (first_row, first_column) = row_column(first).unwrap_or((0, 0));
        let (last_row, last_column) = row_column(last).unwrap_or_else(|| {
            // By name: atspi-proxies 0.13's `nrows()`/`ncolumns()` ask for
            // "Nrows"/"Ncolumns", which no toolkit has ("Property
            // unavailable"); the interface's properties are "NRows" and
            // "NColumns".
            let count = |property: &str| {
                self.ask(at, || table.inner().get_property::<i32>(property))
                    .unwrap_or(0)
            };
            let (n_rows, n_columns) = (count("NRows"), count("NColumns"));
            (n_rows - 1, n_columns - 1)
        });
        (first_row..=last_row, first_column..=last_column)
    }

    /// The cells of `table` (the object `at`) in `rows` and `columns`, with
    /// the columns' headers; at most [`MAX_SHOWING_READ`], the cells asked
    /// in a pipeline.
    fn table_cells(
        &self,
        at: &ObjectRefOwned,
        table: &TableProxyBlocking<'static>,
        rows: RangeInclusive<i32>,
        columns: RangeInclusive<i32>,
    ) -> Vec<ObjectRefOwned> {
        let first_column = *columns.start();
        let n_columns = (columns.end() - first_column + 1).clamp(0, MAX_SHOWING_READ);
        if n_columns == 0 || rows.is_empty() {
            return Vec::new();
        }
        let columns = first_column..first_column + n_columns;
        let mut cells: Vec<ObjectRefOwned> = columns
            .clone()
            .filter_map(|column| self.ask(at, || table.get_column_header(column)))
            .filter(|header| !is_null(header))
            .collect();
        let n_rows = (MAX_SHOWING_READ - cells.len() as i32) / n_columns;
        let last_row = (*rows.end()).min(rows.start() + n_rows - 1);
        let places: Vec<(i32, i32)> = (*rows.start()..=last_row)
            .flat_map(|row| columns.clone().map(move |column| (row, column)))
            .collect();
        cells.extend(self.cells_at(at, &places).into_iter().flatten());
        cells
    }
}
