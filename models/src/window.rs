//! The active window's state: identity, geometry and an optional accessibility tree.

use serde::{Deserialize, Serialize};

use crate::Rect;

/// The active window as the recorder saw it. A new state is stored only when
/// something here changes; events link to the state in effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowState {
    /// Position of this state in the recording (0-based); events link to it.
    pub id: u32,
    /// Seconds since the recording started.
    pub timestamp: f64,
    pub title: String,
    /// The application: WM_CLASS on X11, the bundle or executable name elsewhere.
    pub app_class: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The platform's window id (an X11 window id on Linux).
    pub window_id: u64,
    /// The client area in logical screen coordinates (no frame or title bar).
    pub rect: Rect,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a11y: Option<A11yTree>,
    /// How the window's process was started, where the platform tells
    /// (`replay --launch` starts it again so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<ProcessCommand>,
}

/// A process's command line and the folder it was started in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessCommand {
    /// The program, then its arguments.
    pub argv: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
}

impl WindowState {
    /// Whether two states describe the same window in the same place, ignoring
    /// their ids and timestamps.
    pub fn same_window_as(&self, other: &WindowState) -> bool {
        self.title == other.title
            && self.app_class == other.app_class
            && self.pid == other.pid
            && self.window_id == other.window_id
            && self.rect == other.rect
            && self.a11y == other.a11y
    }
}

/// An accessibility tree in the platform-neutral vocabulary of `accesskit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yTree {
    /// The accessible application's name (empty where it has none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub app: String,
    /// Index into `nodes` of the root.
    pub root: u32,
    pub nodes: Vec<A11yNode>,
}

/// One accessible element.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A11yNode {
    pub role: accesskit::Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Screen box, when the platform reports one for a visible element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<Rect>,
    /// The states identity and effects depend on (selected, checked, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<crate::ElementState>,
    /// The text an editable text field holds, where it was read (by replay,
    /// to check what its keys typed; by the recorder only in the tree read
    /// at an outcome the person marked; never for a password field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Indexes into the tree's `nodes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<u32>,
}

impl A11yTree {
    /// Checks that the root and every child index point into `nodes`.
    pub fn validate(&self) -> Result<(), TreeError> {
        let n_nodes = self.nodes.len();
        if self.root as usize >= n_nodes {
            return Err(TreeError::RootOutside {
                root: self.root,
                n_nodes,
            });
        }
        for (node_idx, node) in self.nodes.iter().enumerate() {
            if let Some(&child) = node
                .children
                .iter()
                .find(|child| **child as usize >= n_nodes)
            {
                return Err(TreeError::ChildOutside {
                    node: node_idx,
                    child,
                    n_nodes,
                });
            }
        }
        Ok(())
    }
}

/// Why an accessibility tree is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("accessibility root {root} is outside {n_nodes} nodes")]
    RootOutside { root: u32, n_nodes: usize },
    #[error("accessibility node {node} names child {child} outside {n_nodes} nodes")]
    ChildOutside {
        node: usize,
        child: u32,
        n_nodes: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_round_trips_with_accesskit_roles() {
        let tree = A11yTree {
            app: "demo".into(),
            root: 0,
            nodes: vec![
                A11yNode {
                    role: accesskit::Role::Window,
                    name: Some("Demo".into()),
                    rect: Some(Rect::new(0, 0, 100, 50)),
                    states: vec![],
                    value: None,
                    children: vec![1],
                },
                A11yNode {
                    role: accesskit::Role::Button,
                    name: Some("OK".into()),
                    rect: Some(Rect::new(10, 10, 30, 20)),
                    states: vec![crate::ElementState::Focused],
                    value: None,
                    children: vec![],
                },
            ],
        };
        let json = serde_json::to_string(&tree).unwrap();
        assert_eq!(serde_json::from_str::<A11yTree>(&json).unwrap(), tree);
        assert!(tree.validate().is_ok());
        let broken = A11yTree {
            app: String::new(),
            root: 0,
            nodes: vec![A11yNode {
                children: vec![7],
                ..tree.nodes[0].clone()
            }],
        };
        assert!(
            broken
                .validate()
                .unwrap_err()
                .to_string()
                .contains("child 7")
        );
    }
}
