//! The element under a point: AT-SPI's hit-testing down from the window
//! that holds it, with the neighbours its identity needs (its row's cells,
//! or its siblings), in screen coordinates.

use atspi_common::{CoordType, ObjectRefOwned};
use atspi_proxies::component::ComponentProxyBlocking;
use atspi_proxies::table::TableProxyBlocking;
use reprise_models::{A11yNode, A11yTree, ElementIdentity};

use super::{A11yReader, is_null, scale_between, to_screen};
use crate::platform::ActiveWindow;

impl A11yReader {
    /// The element under `point` (logical screen coordinates) in the
    /// windows of the application with process id `pid`: the deepest one
    /// AT-SPI's hit-testing reaches, or its nearest ancestor with an
    /// identity, with the other cells of its row or its siblings (a label).
    /// Bounded: at most 32 levels and [`MAX_CHILDREN_READ`](super::MAX_CHILDREN_READ)
    /// siblings.
    pub fn element_at(
        &self,
        window: Option<&ActiveWindow>,
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
}
