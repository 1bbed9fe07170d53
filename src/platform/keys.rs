//! rdev's keys in Reprise's platform-neutral vocabulary: named keys (`ctrl`,
//! `enter`, `f5`, …) and layout-independent characters, with the platform's
//! key code.

use rdev::Key;

/// How one physical key is described in an [`reprise_models::ActionEvent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// The named key, for keys that do not type a character.
    pub name: Option<&'static str>,
    /// The character the key types on a US layout without modifiers: the
    /// canonical character, which replay can press on any layout.
    pub canonical_char: Option<&'static str>,
    /// The platform key code.
    pub vk: Option<u32>,
}

/// Describes an rdev key.
pub fn key_info(key: Key) -> KeyInfo {
    let (name, canonical_char) = match key {
        Key::Alt => (Some("alt"), None),
        Key::AltGr => (Some("alt_gr"), None),
        Key::Backspace => (Some("backspace"), None),
        Key::CapsLock => (Some("caps_lock"), None),
        Key::ControlLeft | Key::ControlRight => (Some("ctrl"), None),
        Key::Delete | Key::KpDelete => (Some("delete"), None),
        Key::DownArrow => (Some("down"), None),
        Key::End => (Some("end"), None),
        Key::Escape => (Some("esc"), None),
        Key::F1 => (Some("f1"), None),
        Key::F2 => (Some("f2"), None),
        Key::F3 => (Some("f3"), None),
        Key::F4 => (Some("f4"), None),
        Key::F5 => (Some("f5"), None),
        Key::F6 => (Some("f6"), None),
        Key::F7 => (Some("f7"), None),
        Key::F8 => (Some("f8"), None),
        Key::F9 => (Some("f9"), None),
        Key::F10 => (Some("f10"), None),
        Key::F11 => (Some("f11"), None),
        Key::F12 => (Some("f12"), None),
        Key::Home => (Some("home"), None),
        Key::LeftArrow => (Some("left"), None),
        Key::MetaLeft | Key::MetaRight => (Some("cmd"), None),
        Key::PageDown => (Some("page_down"), None),
        Key::PageUp => (Some("page_up"), None),
        Key::Return | Key::KpReturn => (Some("enter"), None),
        Key::RightArrow => (Some("right"), None),
        Key::ShiftLeft | Key::ShiftRight => (Some("shift"), None),
        Key::Tab => (Some("tab"), None),
        Key::UpArrow => (Some("up"), None),
        Key::PrintScreen => (Some("print_screen"), None),
        Key::ScrollLock => (Some("scroll_lock"), None),
        Key::Pause => (Some("pause"), None),
        Key::NumLock => (Some("num_lock"), None),
        Key::Insert => (Some("insert"), None),
        Key::Function => (Some("fn"), None),
        Key::Space => (None, Some(" ")),
        Key::BackQuote => (None, Some("`")),
        Key::Num1 | Key::Kp1 => (None, Some("1")),
        Key::Num2 | Key::Kp2 => (None, Some("2")),
        Key::Num3 | Key::Kp3 => (None, Some("3")),
        Key::Num4 | Key::Kp4 => (None, Some("4")),
        Key::Num5 | Key::Kp5 => (None, Some("5")),
        Key::Num6 | Key::Kp6 => (None, Some("6")),
        Key::Num7 | Key::Kp7 => (None, Some("7")),
        Key::Num8 | Key::Kp8 => (None, Some("8")),
        Key::Num9 | Key::Kp9 => (None, Some("9")),
        Key::Num0 | Key::Kp0 => (None, Some("0")),
        Key::Minus | Key::KpMinus => (None, Some("-")),
        Key::Equal => (None, Some("=")),
        Key::KpPlus => (None, Some("+")),
        Key::KpMultiply => (None, Some("*")),
        Key::KpDivide | Key::Slash => (None, Some("/")),
        Key::LeftBracket => (None, Some("[")),
        Key::RightBracket => (None, Some("]")),
        Key::SemiColon => (None, Some(";")),
        Key::Quote => (None, Some("'")),
        Key::BackSlash => (None, Some("\\")),
        // The key between left shift and Z differs between layouts: no
        // canonical character, so replay types what it typed.
        Key::IntlBackslash => (None, None),
        Key::Comma => (None, Some(",")),
        Key::Dot => (None, Some(".")),
        Key::KeyA => (None, Some("a")),
        Key::KeyB => (None, Some("b")),
        Key::KeyC => (None, Some("c")),
        Key::KeyD => (None, Some("d")),
        Key::KeyE => (None, Some("e")),
        Key::KeyF => (None, Some("f")),
        Key::KeyG => (None, Some("g")),
        Key::KeyH => (None, Some("h")),
        Key::KeyI => (None, Some("i")),
        Key::KeyJ => (None, Some("j")),
        Key::KeyK => (None, Some("k")),
        Key::KeyL => (None, Some("l")),
        Key::KeyM => (None, Some("m")),
        Key::KeyN => (None, Some("n")),
        Key::KeyO => (None, Some("o")),
        Key::KeyP => (None, Some("p")),
        Key::KeyQ => (None, Some("q")),
        Key::KeyR => (None, Some("r")),
        Key::KeyS => (None, Some("s")),
        Key::KeyT => (None, Some("t")),
        Key::KeyU => (None, Some("u")),
        Key::KeyV => (None, Some("v")),
        Key::KeyW => (None, Some("w")),
        Key::KeyX => (None, Some("x")),
        Key::KeyY => (None, Some("y")),
        Key::KeyZ => (None, Some("z")),
        Key::Unknown(_) => (None, None),
    };
    KeyInfo {
        name,
        canonical_char,
        vk: key_code(key),
    }
}

/// Whether `name` is the name the listener gives a named key (`pause`,
/// `f12`, `scroll_lock`, …).
pub fn is_key_name(name: &str) -> bool {
    use Key::*;
    [
        Alt,
        AltGr,
        Backspace,
        CapsLock,
        ControlLeft,
        Delete,
        DownArrow,
        End,
        Escape,
        F1,
        F2,
        F3,
        F4,
        F5,
        F6,
        F7,
        F8,
        F9,
        F10,
        F11,
        F12,
        Home,
        LeftArrow,
        MetaLeft,
        PageDown,
        PageUp,
        Return,
        RightArrow,
        ShiftLeft,
        Tab,
        UpArrow,
        PrintScreen,
        ScrollLock,
        Pause,
        NumLock,
        Insert,
        Function,
    ]
    .into_iter()
    .any(|key| key_info(key).name == Some(name))
}

/// X11 key codes (the evdev code plus 8) of the keys rdev names; an unknown
/// key carries its own code.
#[cfg(target_os = "linux")]
fn key_code(key: Key) -> Option<u32> {
    let code = match key {
        Key::Escape => 9,
        Key::Num1 => 10,
        Key::Num2 => 11,
        Key::Num3 => 12,
        Key::Num4 => 13,
        Key::Num5 => 14,
        Key::Num6 => 15,
        Key::Num7 => 16,
        Key::Num8 => 17,
        Key::Num9 => 18,
        Key::Num0 => 19,
        Key::Minus => 20,
        Key::Equal => 21,
        Key::Backspace => 22,
        Key::Tab => 23,
        Key::KeyQ => 24,
        Key::KeyW => 25,
        Key::KeyE => 26,
        Key::KeyR => 27,
        Key::KeyT => 28,
        Key::KeyY => 29,
        Key::KeyU => 30,
        Key::KeyI => 31,
        Key::KeyO => 32,
        Key::KeyP => 33,
        Key::LeftBracket => 34,
        Key::RightBracket => 35,
        Key::Return => 36,
        Key::ControlLeft => 37,
        Key::KeyA => 38,
        Key::KeyS => 39,
        Key::KeyD => 40,
        Key::KeyF => 41,
        Key::KeyG => 42,
        Key::KeyH => 43,
        Key::KeyJ => 44,
        Key::KeyK => 45,
        Key::KeyL => 46,
        Key::SemiColon => 47,
        Key::Quote => 48,
        Key::BackQuote => 49,
        Key::ShiftLeft => 50,
        Key::BackSlash => 51,
        Key::KeyZ => 52,
        Key::KeyX => 53,
        Key::KeyC => 54,
        Key::KeyV => 55,
        Key::KeyB => 56,
        Key::KeyN => 57,
        Key::KeyM => 58,
        Key::Comma => 59,
        Key::Dot => 60,
        Key::Slash => 61,
        Key::ShiftRight => 62,
        Key::KpMultiply => 63,
        Key::Alt => 64,
        Key::Space => 65,
        Key::CapsLock => 66,
        Key::F1 => 67,
        Key::F2 => 68,
        Key::F3 => 69,
        Key::F4 => 70,
        Key::F5 => 71,
        Key::F6 => 72,
        Key::F7 => 73,
        Key::F8 => 74,
        Key::F9 => 75,
        Key::F10 => 76,
        Key::NumLock => 77,
        Key::ScrollLock => 78,
        Key::Kp7 => 79,
        Key::Kp8 => 80,
        Key::Kp9 => 81,
        Key::KpMinus => 82,
        Key::Kp4 => 83,
        Key::Kp5 => 84,
        Key::Kp6 => 85,
        Key::KpPlus => 86,
        Key::Kp1 => 87,
        Key::Kp2 => 88,
        Key::Kp3 => 89,
        Key::Kp0 => 90,
        Key::KpDelete => 91,
        Key::IntlBackslash => 94,
        Key::F11 => 95,
        Key::F12 => 96,
        Key::KpReturn => 104,
        Key::ControlRight => 105,
        Key::KpDivide => 106,
        Key::PrintScreen => 107,
        Key::AltGr => 108,
        Key::Home => 110,
        Key::UpArrow => 111,
        Key::PageUp => 112,
        Key::LeftArrow => 113,
        Key::RightArrow => 114,
        Key::End => 115,
        Key::DownArrow => 116,
        Key::PageDown => 117,
        Key::Insert => 118,
        Key::Delete => 119,
        Key::Pause => 127,
        Key::MetaLeft => 133,
        Key::MetaRight => 134,
        Key::Unknown(code) => code,
        Key::Function => return None,
    };
    Some(code)
}

#[cfg(not(target_os = "linux"))]
fn key_code(key: Key) -> Option<u32> {
    match key {
        Key::Unknown(code) => Some(code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_and_characters_are_named_platform_neutrally() {
        assert_eq!(key_info(Key::ControlRight).name, Some("ctrl"));
        assert_eq!(key_info(Key::ControlLeft).vk, Some(37));
        assert_eq!(key_info(Key::KeyA).canonical_char, Some("a"));
        assert_eq!(
            key_info(Key::Space).name,
            None,
            "a space is text, not a named key"
        );
        assert_eq!(
            key_info(Key::Unknown(200)),
            KeyInfo {
                name: None,
                canonical_char: None,
                vk: Some(200)
            }
        );
    }
}
