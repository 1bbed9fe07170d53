//! Segmentation quality on a real application: the fixture knows its own
//! layout and logs every interactive widget's box, the ground truth. Recall is
//! the share of widgets that some segment matches with IoU >= 0.5; the floor
//! pinned here keeps quality from silently regressing.

use serde_json::Value;

use crate::harness::{Display, fixture_log, output_ok, run_ok, wait_for};

fn iou(a: [f64; 4], b: [f64; 4]) -> f64 {
    let (x0, y0) = (a[0].max(b[0]), a[1].max(b[1]));
    let (x1, y1) = (
        (a[0] + a[2]).min(b[0] + b[2]),
        (a[1] + a[3]).min(b[1] + b[3]),
    );
    let overlap = (x1 - x0).max(0.0) * (y1 - y0).max(0.0);
    overlap / (a[2] * a[3] + b[2] * b[3] - overlap)
}

fn rect_of(value: &Value) -> [f64; 4] {
    match value {
        Value::Array(items) => [0, 1, 2, 3].map(|idx| items[idx].as_f64().unwrap()),
        object => ["x", "y", "width", "height"].map(|key| object[key].as_f64().unwrap()),
    }
}

/// The `rect` of each item of a JSON array.
fn rects(items: &Value) -> Vec<[f64; 4]> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|item| rect_of(&item["rect"]))
        .collect()
}

/// Recall and precision of the segmentation of the fixture started with `args`.
fn measure(args: &[&str]) -> (f64, f64, usize) {
    let mut display = Display::start(1280, 800);
    let log = display.spawn_fixture("layout.log", args);
    let widgets: Vec<[f64; 4]> = wait_for("the fixture's layout", || {
        let layout = fixture_log(&log)
            .into_iter()
            .rev()
            .find(|entry| entry["event"] == "layout")?;
        Some(
            layout["widgets"]
                .as_array()?
                .iter()
                .map(|widget| rect_of(&widget["rect"]))
                .collect(),
        )
    });
    // The fixture is the active window; wait until it has drawn itself.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let shot = display.active_window_shot("window.png");
    let (recall, precision) = recall_and_precision(&display, &shot, &widgets);
    (recall, precision, widgets.len())
}

/// Segments the image at `shot` with `reprise segment`: the share of
/// `widgets` that some segment matches with IoU >= 0.5, and the share of
/// segments that match some widget.
fn recall_and_precision(
    display: &Display,
    shot: &std::path::Path,
    widgets: &[[f64; 4]],
) -> (f64, f64) {
    let segments: Value = serde_json::from_str(&run_ok(display.reprise().args([
        "segment",
        shot.to_str().unwrap(),
        "--json",
    ])))
    .unwrap();
    let boxes = rects(&segments);
    let found = widgets
        .iter()
        .filter(|widget| boxes.iter().any(|b| iou(**widget, *b) >= 0.5))
        .count();
    let matching = boxes
        .iter()
        .filter(|b| widgets.iter().any(|widget| iou(*widget, **b) >= 0.5))
        .count();
    (
        found as f64 / widgets.len() as f64,
        matching as f64 / boxes.len() as f64,
    )
}

#[test]
fn segmentation_recall_on_the_fixture_and_its_perturbations() {
    let variants: [&[&str]; 5] = [
        &[],
        &["--theme", "dark"],
        &["--scale", "1.5", "--width", "640", "--height", "600"],
        &["--extra-row", "--swap-buttons"],
        &["--width", "600", "--height", "450"],
    ];
    let mut report = Vec::new();
    for args in variants {
        let (recall, precision, n_widgets) = measure(args);
        report.push(format!(
            "{args:?}: recall {recall:.2} precision {precision:.2} of {n_widgets} widgets"
        ));
        assert!(recall >= 0.9, "recall fell below the floor: {report:?}");
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn the_segmentation_cache_is_reused_across_processes_only_while_the_target_is_unchanged() {
    let mut display = Display::start(1280, 800);
    display.spawn_fixture("cache.log", &[]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let original = display.active_window_shot("original.png");
    // The same window with something typed into the text field at 81,33 280x20.
    let mut typed = image::open(&original).unwrap().into_rgba8();
    for y in 38..48 {
        for x in 86..130 {
            typed.put_pixel(x, y, image::Rgba([20, 20, 20, 255]));
        }
    }
    let changed = display.dir.path().join("typed.png");
    typed.save(&changed).unwrap();

    let segment = |image: &std::path::Path, target: &str| {
        let out = output_ok(display.reprise().args([
            "segment",
            image.to_str().unwrap(),
            "--cache",
            "--target",
            target,
        ]));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let text_field = "81,33,280,20";
    let save_button = "8,207,43,20";
    assert!(segment(&original, text_field).contains("cache miss"));
    assert!(
        segment(&original, text_field).contains("cache hit"),
        "a second process reuses the first one's segmentation"
    );
    assert!(
        segment(&changed, text_field).contains("cache miss"),
        "the target's region changed: not reused"
    );
    // Elsewhere on the similar screen the cached segmentation (the original's,
    // the first stored) is still good.
    let reused = segment(&changed, save_button);
    assert!(
        reused.contains("cache hit: reusing segmentation"),
        "{reused}"
    );
}

#[test]
fn segmentation_recall_on_gtk3_widget_factory_with_accessibility_ground_truth() {
    // Room for the window at scale 2 (twice the pixels: HiDPI).
    let display = Display::start(3200, 1800);
    let mut report = Vec::new();
    for (page, scale) in [("1", "1"), ("2", "1"), ("3", "1"), ("1", "2")] {
        let out = display.dir.path().join(format!("page{page}-scale{scale}"));
        std::fs::create_dir_all(&out).unwrap();
        // The application and the reader of its AT-SPI tree share one D-Bus
        // session; the script shows the page and writes window.png and
        // truth.json.
        run_ok(
            display
                .command("dbus-run-session")
                .args(["--", "bash"])
                .arg(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/scripts/gtk-capture.sh"
                ))
                .arg(page)
                .arg(&out)
                .env("GDK_SCALE", scale)
                .env("REPRISE", env!("CARGO_BIN_EXE_reprise")),
        );
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("truth.json")).unwrap())
                .unwrap();
        let widgets = rects(&truth);
        assert!(
            widgets.len() >= 30,
            "page {page} at scale {scale}: the tree gave {} widgets",
            widgets.len()
        );
        let (recall, precision) = recall_and_precision(&display, &out.join("window.png"), &widgets);
        report.push(format!(
            "page {page} at scale {scale}: recall {recall:.2} precision {precision:.2} of {} widgets",
            widgets.len()
        ));
        // Measured 0.98, 1.00 and 0.98, and 0.98 at scale 2 (BENCHMARKS.md);
        // the floor keeps it from silently regressing.
        assert!(recall >= 0.9, "recall fell below the floor: {report:?}");
    }
    eprintln!("{}", report.join("\n"));
}
