//! AT-SPI's roles and states in the platform-neutral vocabulary of
//! `accesskit` and `reprise-models`.

use atspi_common::{Role, State};
use reprise_models::ElementState;

/// The AT-SPI states identity and effects depend on.
pub(super) fn element_states(states: atspi_common::StateSet) -> Vec<ElementState> {
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
