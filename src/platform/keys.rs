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
    let find = |table: &[(Key, &'static str)]| {
        table
            .iter()
            .find(|(known, _)| *known == key)
            .map(|(_, words)| *words)
    };
    KeyInfo {
        name: find(&NAMED),
        canonical_char: find(&CHARACTERS),
        vk: key_code(key),
    }
}

/// The keys that type no character, by the names Reprise gives them.
const NAMED: [(Key, &str); 42] = [
    (Key::Alt, "alt"),
    (Key::AltGr, "alt_gr"),
    (Key::Backspace, "backspace"),
    (Key::CapsLock, "caps_lock"),
    (Key::ControlLeft, "ctrl"),
    (Key::ControlRight, "ctrl"),
    (Key::Delete, "delete"),
    (Key::KpDelete, "delete"),
    (Key::DownArrow, "down"),
    (Key::End, "end"),
    (Key::Escape, "esc"),
    (Key::F1, "f1"),
    (Key::F2, "f2"),
    (Key::F3, "f3"),
    (Key::F4, "f4"),
    (Key::F5, "f5"),
    (Key::F6, "f6"),
    (Key::F7, "f7"),
    (Key::F8, "f8"),
    (Key::F9, "f9"),
    (Key::F10, "f10"),
    (Key::F11, "f11"),
    (Key::F12, "f12"),
    (Key::Home, "home"),
    (Key::LeftArrow, "left"),
    (Key::MetaLeft, "cmd"),
    (Key::MetaRight, "cmd"),
    (Key::PageDown, "page_down"),
    (Key::PageUp, "page_up"),
    (Key::Return, "enter"),
    (Key::KpReturn, "enter"),
    (Key::RightArrow, "right"),
    (Key::ShiftLeft, "shift"),
    (Key::ShiftRight, "shift"),
    (Key::Tab, "tab"),
    (Key::UpArrow, "up"),
    (Key::PrintScreen, "print_screen"),
    (Key::ScrollLock, "scroll_lock"),
    (Key::Pause, "pause"),
    (Key::NumLock, "num_lock"),
    (Key::Insert, "insert"),
    (Key::Function, "fn"),
];

/// The keys that type a character: the one they type on a US layout
/// without modifiers.
const CHARACTERS: [(Key, &str); 62] = [
    (Key::Space, " "),
    (Key::BackQuote, "`"),
    (Key::BackSlash, "\\"),
    (Key::Num1, "1"),
    (Key::Kp1, "1"),
    (Key::Num2, "2"),
    (Key::Kp2, "2"),
    (Key::Num3, "3"),
    (Key::Kp3, "3"),
    (Key::Num4, "4"),
    (Key::Kp4, "4"),
    (Key::Num5, "5"),
    (Key::Kp5, "5"),
    (Key::Num6, "6"),
    (Key::Kp6, "6"),
    (Key::Num7, "7"),
    (Key::Kp7, "7"),
    (Key::Num8, "8"),
    (Key::Kp8, "8"),
    (Key::Num9, "9"),
    (Key::Kp9, "9"),
    (Key::Num0, "0"),
    (Key::Kp0, "0"),
    (Key::Minus, "-"),
    (Key::KpMinus, "-"),
    (Key::Equal, "="),
    (Key::KpPlus, "+"),
    (Key::KpMultiply, "*"),
    (Key::KpDivide, "/"),
    (Key::Slash, "/"),
    (Key::LeftBracket, "["),
    (Key::RightBracket, "]"),
    (Key::SemiColon, ";"),
    (Key::Quote, "'"),
    (Key::Comma, ","),
    (Key::Dot, "."),
    (Key::KeyA, "a"),
    (Key::KeyB, "b"),
    (Key::KeyC, "c"),
    (Key::KeyD, "d"),
    (Key::KeyE, "e"),
    (Key::KeyF, "f"),
    (Key::KeyG, "g"),
    (Key::KeyH, "h"),
    (Key::KeyI, "i"),
    (Key::KeyJ, "j"),
    (Key::KeyK, "k"),
    (Key::KeyL, "l"),
    (Key::KeyM, "m"),
    (Key::KeyN, "n"),
    (Key::KeyO, "o"),
    (Key::KeyP, "p"),
    (Key::KeyQ, "q"),
    (Key::KeyR, "r"),
    (Key::KeyS, "s"),
    (Key::KeyT, "t"),
    (Key::KeyU, "u"),
    (Key::KeyV, "v"),
    (Key::KeyW, "w"),
    (Key::KeyX, "x"),
    (Key::KeyY, "y"),
    (Key::KeyZ, "z"),
];

/// Whether `name` is the name the listener gives a named key (`pause`,
/// `f12`, `scroll_lock`, …).
pub fn is_key_name(name: &str) -> bool {
    NAMED.iter().any(|(_, known)| *known == name)
}

/// X11 key codes (the evdev code plus 8) of the keys rdev names; an unknown
/// key carries its own code.
#[cfg(target_os = "linux")]
fn key_code(key: Key) -> Option<u32> {
    match key {
        Key::Unknown(code) => Some(code),
        key => CODES
            .iter()
            .find(|(known, _)| *known == key)
            .map(|(_, code)| *code),
    }
}

/// The X11 key codes of the keys rdev names.
#[cfg(target_os = "linux")]
const CODES: [(Key, u32); 104] = [
    (Key::Escape, 9),
    (Key::Num1, 10),
    (Key::Num2, 11),
    (Key::Num3, 12),
    (Key::Num4, 13),
    (Key::Num5, 14),
    (Key::Num6, 15),
    (Key::Num7, 16),
    (Key::Num8, 17),
    (Key::Num9, 18),
    (Key::Num0, 19),
    (Key::Minus, 20),
    (Key::Equal, 21),
    (Key::Backspace, 22),
    (Key::Tab, 23),
    (Key::KeyQ, 24),
    (Key::KeyW, 25),
    (Key::KeyE, 26),
    (Key::KeyR, 27),
    (Key::KeyT, 28),
    (Key::KeyY, 29),
    (Key::KeyU, 30),
    (Key::KeyI, 31),
    (Key::KeyO, 32),
    (Key::KeyP, 33),
    (Key::LeftBracket, 34),
    (Key::RightBracket, 35),
    (Key::Return, 36),
    (Key::ControlLeft, 37),
    (Key::KeyA, 38),
    (Key::KeyS, 39),
    (Key::KeyD, 40),
    (Key::KeyF, 41),
    (Key::KeyG, 42),
    (Key::KeyH, 43),
    (Key::KeyJ, 44),
    (Key::KeyK, 45),
    (Key::KeyL, 46),
    (Key::SemiColon, 47),
    (Key::Quote, 48),
    (Key::BackQuote, 49),
    (Key::ShiftLeft, 50),
    (Key::BackSlash, 51),
    (Key::KeyZ, 52),
    (Key::KeyX, 53),
    (Key::KeyC, 54),
    (Key::KeyV, 55),
    (Key::KeyB, 56),
    (Key::KeyN, 57),
    (Key::KeyM, 58),
    (Key::Comma, 59),
    (Key::Dot, 60),
    (Key::Slash, 61),
    (Key::ShiftRight, 62),
    (Key::KpMultiply, 63),
    (Key::Alt, 64),
    (Key::Space, 65),
    (Key::CapsLock, 66),
    (Key::F1, 67),
    (Key::F2, 68),
    (Key::F3, 69),
    (Key::F4, 70),
    (Key::F5, 71),
    (Key::F6, 72),
    (Key::F7, 73),
    (Key::F8, 74),
    (Key::F9, 75),
    (Key::F10, 76),
    (Key::NumLock, 77),
    (Key::ScrollLock, 78),
    (Key::Kp7, 79),
    (Key::Kp8, 80),
    (Key::Kp9, 81),
    (Key::KpMinus, 82),
    (Key::Kp4, 83),
    (Key::Kp5, 84),
    (Key::Kp6, 85),
    (Key::KpPlus, 86),
    (Key::Kp1, 87),
    (Key::Kp2, 88),
    (Key::Kp3, 89),
    (Key::Kp0, 90),
    (Key::KpDelete, 91),
    (Key::IntlBackslash, 94),
    (Key::F11, 95),
    (Key::F12, 96),
    (Key::KpReturn, 104),
    (Key::ControlRight, 105),
    (Key::KpDivide, 106),
    (Key::PrintScreen, 107),
    (Key::AltGr, 108),
    (Key::Home, 110),
    (Key::UpArrow, 111),
    (Key::PageUp, 112),
    (Key::LeftArrow, 113),
    (Key::RightArrow, 114),
    (Key::End, 115),
    (Key::DownArrow, 116),
    (Key::PageDown, 117),
    (Key::Insert, 118),
    (Key::Delete, 119),
    (Key::Pause, 127),
    (Key::MetaLeft, 133),
    (Key::MetaRight, 134),
];

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
