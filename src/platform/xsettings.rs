//! The XSETTINGS protocol (freedesktop.org): a settings daemon (xsettingsd,
//! gnome-settings-daemon, xfsettingsd) owns the selection `_XSETTINGS_S<n>`
//! and publishes the settings in the property `_XSETTINGS_SETTINGS` of its
//! window. Only the parsing lives here; it touches nothing.

/// One setting's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i32),
    String(String),
    Color([u16; 4]),
}

/// Why a `_XSETTINGS_SETTINGS` property cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XSettingsError {
    #[error("unknown byte order {0}")]
    ByteOrder(u8),
    #[error("{count} settings cannot fit in {bytes} bytes")]
    TooMany { count: u32, bytes: usize },
    #[error("setting {name:?} has unknown type {kind}")]
    UnknownType { name: String, kind: u8 },
    #[error("the settings end after {bytes} bytes, {wanted} more were expected")]
    Truncated { bytes: usize, wanted: usize },
}

/// Parses the `_XSETTINGS_SETTINGS` property into (name, value) pairs.
pub fn parse(data: &[u8]) -> Result<Vec<(String, Value)>, XSettingsError> {
    let mut reader = Reader {
        data,
        at: 0,
        big_endian: false,
    };
    reader.big_endian = match reader.take(1)?[0] {
        0 => false,
        1 => true,
        other => return Err(XSettingsError::ByteOrder(other)),
    };
    reader.take(3)?;
    let _serial = reader.card32()?;
    let n_settings = reader.card32()?;
    // Each setting takes at least 12 bytes: a bound against a bogus count.
    if n_settings as usize > data.len() / 12 {
        return Err(XSettingsError::TooMany {
            count: n_settings,
            bytes: data.len(),
        });
    }
    let mut settings = Vec::with_capacity(n_settings as usize);
    for _ in 0..n_settings {
        let kind = reader.take(1)?[0];
        reader.take(1)?;
        let name_len = reader.card16()? as usize;
        let name = String::from_utf8_lossy(reader.padded(name_len)?).into_owned();
        let _last_change = reader.card32()?;
        let value = match kind {
            0 => Value::Int(reader.card32()? as i32),
            1 => {
                let len = reader.card32()? as usize;
                Value::String(String::from_utf8_lossy(reader.padded(len)?).into_owned())
            }
            2 => Value::Color([
                reader.card16()?,
                reader.card16()?,
                reader.card16()?,
                reader.card16()?,
            ]),
            other => return Err(XSettingsError::UnknownType { name, kind: other }),
        };
        settings.push((name, value));
    }
    Ok(settings)
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    big_endian: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], XSettingsError> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.data.len());
        let Some(end) = end else {
            return Err(XSettingsError::Truncated {
                bytes: self.data.len(),
                wanted: n,
            });
        };
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    /// `n` bytes, then the padding to a multiple of four.
    fn padded(&mut self, n: usize) -> Result<&'a [u8], XSettingsError> {
        let bytes = self.take(n)?;
        self.take((4 - n % 4) % 4)?;
        Ok(bytes)
    }

    fn card16(&mut self) -> Result<u16, XSettingsError> {
        let bytes: [u8; 2] = self.take(2)?.try_into().expect("two bytes");
        Ok(if self.big_endian {
            u16::from_be_bytes(bytes)
        } else {
            u16::from_le_bytes(bytes)
        })
    }

    fn card32(&mut self) -> Result<u32, XSettingsError> {
        let bytes: [u8; 4] = self.take(4)?.try_into().expect("four bytes");
        Ok(if self.big_endian {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a property as a settings daemon would.
    fn property(big_endian: bool, settings: &[(&str, Value)]) -> Vec<u8> {
        let card16 = |n: u16| {
            if big_endian {
                n.to_be_bytes()
            } else {
                n.to_le_bytes()
            }
        };
        let card32 = |n: u32| {
            if big_endian {
                n.to_be_bytes()
            } else {
                n.to_le_bytes()
            }
        };
        let pad = |out: &mut Vec<u8>| out.resize(out.len().div_ceil(4) * 4, 0);
        let mut out = vec![u8::from(big_endian), 0, 0, 0];
        out.extend(card32(7));
        out.extend(card32(settings.len() as u32));
        for (name, value) in settings {
            let kind = match value {
                Value::Int(_) => 0,
                Value::String(_) => 1,
                Value::Color(_) => 2,
            };
            out.extend([kind, 0]);
            out.extend(card16(name.len() as u16));
            out.extend(name.as_bytes());
            pad(&mut out);
            out.extend(card32(3));
            match value {
                Value::Int(n) => out.extend(card32(*n as u32)),
                Value::String(text) => {
                    out.extend(card32(text.len() as u32));
                    out.extend(text.as_bytes());
                    pad(&mut out);
                }
                Value::Color(channels) => {
                    for channel in channels {
                        out.extend(card16(*channel));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn parses_both_byte_orders_and_every_type() {
        let settings = [
            ("Net/DoubleClickTime", Value::Int(400)),
            ("Net/ThemeName", Value::String("Adwaita".into())),
            ("Gtk/ColorX", Value::Color([1, 2, 3, 65535])),
            ("Net/DoubleClickDistance", Value::Int(-8)),
        ];
        for big_endian in [false, true] {
            let parsed = parse(&property(big_endian, &settings)).unwrap();
            let expected: Vec<(String, Value)> = settings
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone()))
                .collect();
            assert_eq!(parsed, expected, "big endian: {big_endian}");
        }
    }

    #[test]
    fn truncated_or_bogus_data_is_an_error_not_a_panic() {
        let data = property(false, &[("Net/DoubleClickTime", Value::Int(400))]);
        for len in 0..data.len() {
            assert!(parse(&data[..len]).is_err(), "{len} bytes");
        }
        let mut bogus = data.clone();
        bogus[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(parse(&bogus), Err(XSettingsError::TooMany { .. })));
        let mut order = data;
        order[0] = 9;
        assert_eq!(parse(&order), Err(XSettingsError::ByteOrder(9)));
    }
}
