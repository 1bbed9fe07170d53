//! Stage 6 of the classical segmenter: rows of lists and tables drawn
//! without borders, from what repeats down a container.

use super::ClassicalSegmenter;
use crate::vision::PixelRect;

impl ClassicalSegmenter {
    /// Rows of lists and tables drawn without borders: inside a container
    /// (a region or a box), its direct contents (text lines and small
    /// regions) fall into horizontal bands; a run of at least
    /// `min_list_rows` bands at a regular pitch of at least
    /// `min_row_pitch_ratio` text heights (wider than a paragraph's line
    /// spacing) is a list, and each band's row reaches across the container
    /// and half-way to its neighbours.
    pub(super) fn list_rows(
        &self,
        containers: &[PixelRect],
        contents: &[PixelRect],
        unit: u32,
    ) -> Vec<PixelRect> {
        let unit = f64::from(unit.max(1));
        let min_pitch = self.min_row_pitch_ratio * unit;
        let max_pitch = self.max_row_pitch_ratio * unit;
        let big_enough = |rect: &PixelRect| {
            f64::from(rect.width) >= self.min_list_width_ratio * unit
                && f64::from(rect.height) >= self.min_list_rows as f64 * min_pitch
        };
        // Each content rectangle belongs to the smallest container around it.
        let mut containers: Vec<PixelRect> = containers
            .iter()
            .filter(|rect| big_enough(rect))
            .copied()
            .collect();
        containers.sort_by_key(|rect| (rect.area(), rect.y, rect.x));
        containers.dedup();
        let mut children: Vec<Vec<PixelRect>> = vec![Vec::new(); containers.len()];
        for item in contents {
            let parent = containers
                .iter()
                .position(|container| container != item && container.contains(item));
            if let Some(parent) = parent {
                children[parent].push(*item);
            }
        }
        let mut rows = Vec::new();
        for (container, mut items) in containers.iter().zip(children) {
            items.retain(|item| item.height * 3 < container.height);
            items.sort_by_key(|item| item.y);
            // Bands: vertical extents of the items, merged where they overlap.
            let mut bands: Vec<(u32, u32)> = Vec::new();
            for item in items {
                match bands.last_mut() {
                    Some(band) if item.y < band.1 => band.1 = band.1.max(item.bottom()),
                    _ => bands.push((item.y, item.bottom())),
                }
            }
            let centre = |band: (u32, u32)| f64::from(band.0 + band.1) / 2.0;
            let mut start = 0;
            while start + 1 < bands.len() {
                // The longest run from `start` whose pitches stay near its first.
                let first_pitch = centre(bands[start + 1]) - centre(bands[start]);
                let regular = |pitch: f64| {
                    (min_pitch..=max_pitch).contains(&pitch)
                        && (pitch - first_pitch).abs() <= self.row_pitch_tolerance * first_pitch
                };
                let mut end = start + 1;
                while end + 1 < bands.len() && regular(centre(bands[end + 1]) - centre(bands[end]))
                {
                    end += 1;
                }
                if !regular(first_pitch) || end + 1 - start < self.min_list_rows {
                    start += 1;
                    continue;
                }
                rows.extend(run_rows(container, &bands[start..=end]));
                start = end;
            }
        }
        rows
    }
}

/// The rows of a regular run of item bands in `container`: each band
/// widened half-way to its neighbours (at the ends of the run, by the same
/// margin as on its other side), across the container.
fn run_rows<'a>(
    container: &'a PixelRect,
    run: &'a [(u32, u32)],
) -> impl Iterator<Item = PixelRect> + 'a {
    run.iter().enumerate().filter_map(move |(idx, band)| {
        let gap_above = idx
            .checked_sub(1)
            .map(|before| band.0.saturating_sub(run[before].1));
        let gap_below = run.get(idx + 1).map(|after| after.0.saturating_sub(band.1));
        let (above, below) = match (gap_above, gap_below) {
            (Some(above), Some(below)) => (above, below),
            (Some(gap), None) | (None, Some(gap)) => (gap, gap),
            (None, None) => (0, 0),
        };
        let top = band.0.saturating_sub(above / 2).max(container.y);
        let bottom = (band.1 + below.div_ceil(2)).min(container.bottom());
        (bottom > top).then(|| PixelRect {
            x: container.x,
            y: top,
            width: container.width,
            height: bottom - top,
        })
    })
}
