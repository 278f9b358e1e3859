//! results.md, results.json and results.svg.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use crate::index::{self, Engine, IndexReport, Layout};
use crate::run::{ClassResult, Regime};

/// Everything one run produced.
pub struct RunReport {
    /// Command line.
    pub command: String,
    /// Corpus description.
    pub corpus: String,
    /// CPU model (lscpu "Model name").
    pub cpu: String,
    /// Start time (UTC, `date -u` style).
    pub date: String,
    /// Timing settings, described.
    pub settings: String,
    /// Corpus statistics, described.
    pub stats: String,
    /// Threads of the concurrent phase, if it ran.
    pub threads: Option<usize>,
    /// Self-checks that ran before measuring, described.
    pub checks: Vec<String>,
    /// Indexing reports per (engine, layout).
    pub indexing: Vec<Build>,
    /// The document count and reports of the builds at scale (one
    /// layout, index only), if they ran.
    pub scale: Option<(u64, Vec<Build>)>,
    /// Per layout: segments (quarry, tantivy), load averages before and
    /// after, and the class results.
    pub layouts: Vec<LayoutReport>,
}

/// One build's report: its engine and layout, and what it measured.
pub type Build = (Engine, Layout, IndexReport);

/// One layout's measurements.
pub struct LayoutReport {
    /// The layout.
    pub layout: Layout,
    /// Segments (quarry, tantivy).
    pub segments: (usize, usize),
    /// Whether tantivy's segments are in insertion order.
    pub tantivy_segments_in_order: bool,
    /// /proc/loadavg before measuring.
    pub load_before: String,
    /// /proc/loadavg after measuring.
    pub load_after: String,
    /// Results per class, op and regime.
    pub results: Vec<ClassResult>,
}

impl LayoutReport {
    /// The regimes measured, in run order.
    pub fn regimes(&self) -> Vec<Regime> {
        let mut v = Vec::new();
        for c in &self.results {
            if !v.contains(&c.regime) {
                v.push(c.regime);
            }
        }
        v
    }

    /// The results of one regime.
    pub fn of(&self, regime: Regime) -> impl Iterator<Item = &ClassResult> {
        self.results.iter().filter(move |c| c.regime == regime)
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0);
    for x in v {
        if x > 0.0 && x.is_finite() {
            s += x.ln();
            n += 1;
        }
    }
    if n == 0 {
        f64::NAN
    } else {
        (s / n as f64).exp()
    }
}

/// The markdown report.
pub fn markdown(r: &RunReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# quarry vs tantivy: macro benchmark results\n");
    let _ = writeln!(s, "- command: `{}`", r.command);
    let _ = writeln!(s, "- date: {}", r.date);
    let _ = writeln!(s, "- CPU: {}", r.cpu);
    let _ = writeln!(s, "- corpus: {}", r.corpus);
    let _ = writeln!(s, "- corpus stats: {}", r.stats);
    let _ = writeln!(s, "- timing: {}", r.settings);
    for c in &r.checks {
        let _ = writeln!(s, "- check: {c}");
    }
    indexing_section(&mut s, "## Indexing", &r.indexing);
    if let Some((docs, scale)) = &r.scale {
        let title = format!("## Indexing at scale: {docs} documents of the same corpus shape");
        indexing_section(&mut s, &title, scale);
    }
    for lr in &r.layouts {
        for regime in lr.regimes() {
            search_tables(&mut s, r, lr, regime);
        }
        let checked: usize = lr.results.iter().map(|c| c.oracle_checked).sum();
        let max_rel = lr
            .results
            .iter()
            .map(|c| c.agreement.max_rel_score_diff)
            .fold(0.0, f64::max);
        let _ = writeln!(
            s,
            "\nEvery measured quarry result equalled the exhaustive path (doc ids and score bits; totals exact in the exact regime, \
             no larger than the exhaustive count and flagged inexact when smaller in the lower-bound regime), and every tantivy Count \
             of the exact regime equalled the exhaustive count: {checked} (query, regime) pairs checked. \
             Largest relative score difference between the engines for the same document at the same rank: {max_rel:.1e}."
        );
    }
    let _ = writeln!(
        s,
        "\nCPU ms/q is process CPU time over completed queries; p50/p99 are wall latencies; each figure is the median of the passes, \
         and the ratio is the median of the per-pass quarry/tantivy ratios (both engines run the same queries in a pass). \
         \"same order, ties aside\" counts queries whose lists are in the same order, or differ only in which of equally scored documents they show \
         (the two lists' scores agree rank by rank within 1e-5, relative). \
         \"quarry totals exact\" is the share of checked queries whose total quarry reported as exact: 100 % in the exact regime; \
         in the lower-bound regime the rest skipped documents that could not enter the top 10."
    );
    s
}

/// The tables of one layout and one counting regime.
fn search_tables(s: &mut String, r: &RunReport, lr: &LayoutReport, regime: Regime) {
    let _ = writeln!(
        s,
        "\n## Search, {} layout, {} regime: {} (quarry {} segment(s), tantivy {} segment(s)), top-{}, one thread\n",
        lr.layout.name(),
        regime.name(),
        regime.describe(),
        lr.segments.0,
        lr.segments.1,
        crate::run::TOP_K
    );
    let _ = writeln!(
        s,
        "Load average before / after: {} / {}.\n",
        lr.load_before, lr.load_after
    );
    if lr.segments.1 > 1 && !lr.tantivy_segments_in_order {
        let _ = writeln!(
            s,
            "tantivy's segment ordinals are not in insertion order here (its segment register is a hash map), \
             so where scores tie exactly it prefers other documents than quarry does (both break ties by \
             their own doc order): compare the \"ties aside\" column.\n"
        );
    }
    let _ = writeln!(
        s,
        "| class | op | quarry CPU ms/q | tantivy CPU ms/q | quarry/tantivy | quarry p50 / p99 ms | tantivy p50 / p99 ms | queries | top-10 same set / same order | same order, ties aside | quarry totals exact |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in lr.of(regime) {
        let a = &c.agreement;
        let pct = |x: usize| 100.0 * x as f64 / a.queries.max(1) as f64;
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} | {:.3} | **{:.2}** | {:.3} / {:.3} | {:.3} / {:.3} | {} | {:.0} % / {:.0} % | {:.0} % | {:.0} % |",
            c.class,
            c.op,
            c.cpu_ms(Engine::Quarry),
            c.cpu_ms(Engine::Tantivy),
            c.ratio(),
            c.p50(Engine::Quarry),
            c.p99(Engine::Quarry),
            c.p50(Engine::Tantivy),
            c.p99(Engine::Tantivy),
            c.measured(),
            pct(a.same_set),
            pct(a.same_order),
            pct(a.same_order + a.near_ties),
            100.0 * c.totals_exact as f64 / c.oracle_checked.max(1) as f64
        );
    }
    for op in [
        "AND",
        "OR",
        "AND year:desc,score",
        "OR year:desc,score",
        "AND category,year:desc",
        "OR category,year:desc",
    ] {
        if !lr.of(regime).any(|c| c.op == op) {
            continue;
        }
        let g = geomean(lr.of(regime).filter(|c| c.op == op).map(|c| c.ratio()));
        let _ = writeln!(
            s,
            "\nGeometric mean of the {op} ratios, {} regime: {g:.2}.",
            regime.name()
        );
    }
    if let Some(threads) = r.threads.filter(|&t| t > 1) {
        let _ = writeln!(
            s,
            "\n### {threads} threads sharing one searcher, {} layout, {} regime\n",
            lr.layout.name(),
            regime.name()
        );
        let _ = writeln!(
            s,
            "| class | op | quarry CPU ms/q | tantivy CPU ms/q | quarry/tantivy | quarry q/s | tantivy q/s | quarry p50 / p99 ms | tantivy p50 / p99 ms |"
        );
        let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
        for c in lr.of(regime) {
            if let Some((q, t)) = &c.concurrent {
                let _ = writeln!(
                    s,
                    "| {} | {} | {:.3} | {:.3} | **{:.2}** | {:.0} | {:.0} | {:.3} / {:.3} | {:.3} / {:.3} |",
                    c.class,
                    c.op,
                    q.cpu_ms(),
                    t.cpu_ms(),
                    q.cpu_ms() / t.cpu_ms(),
                    q.count as f64 / q.wall_s,
                    t.count as f64 / t.wall_s,
                    q.p50_ms,
                    q.p99_ms,
                    t.p50_ms,
                    t.p99_ms
                );
            }
        }
    }
}

/// The JSON form of the whole run.
pub fn json(r: &RunReport) -> serde_json::Value {
    let layouts: Vec<serde_json::Value> = r
        .layouts
        .iter()
        .map(|lr| {
            let classes: Vec<serde_json::Value> = lr
                .results
                .iter()
                .map(|c| {
                    let ms = |v: &[crate::run::Measurement]| -> Vec<serde_json::Value> {
                        v.iter()
                            .map(|m| {
                                serde_json::json!({"start": m.start, "count": m.count, "cpu_s": m.cpu_s,
                                "wall_s": m.wall_s, "p50_ms": m.p50_ms, "p99_ms": m.p99_ms})
                            })
                            .collect()
                    };
                    let a = &c.agreement;
                    serde_json::json!({
                        "class": c.class, "op": c.op, "regime": c.regime.name(),
                        "quarry_cpu_ms": c.cpu_ms(Engine::Quarry), "tantivy_cpu_ms": c.cpu_ms(Engine::Tantivy),
                        "ratio": c.ratio(),
                        "quarry_p50_ms": c.p50(Engine::Quarry), "quarry_p99_ms": c.p99(Engine::Quarry),
                        "tantivy_p50_ms": c.p50(Engine::Tantivy), "tantivy_p99_ms": c.p99(Engine::Tantivy),
                        "quarry_passes": ms(&c.quarry), "tantivy_passes": ms(&c.tantivy),
                        "agreement": {"queries": a.queries, "same_set": a.same_set, "same_order": a.same_order,
                                      "near_ties": a.near_ties, "max_rel_score_diff": a.max_rel_score_diff},
                        "oracle_checked": c.oracle_checked, "quarry_totals_exact": c.totals_exact,
                    })
                })
                .collect();
            serde_json::json!({
                "layout": lr.layout.name(), "segments": [lr.segments.0, lr.segments.1],
                "load_before": lr.load_before, "load_after": lr.load_after, "classes": classes,
            })
        })
        .collect();
    let builds = |list: &[Build]| -> Vec<serde_json::Value> {
        list.iter()
            .map(|(e, l, ir)| {
                let mut v = ir.to_json();
                v["engine"] = e.name().into();
                v["layout"] = l.name().into();
                v
            })
            .collect()
    };
    let indexing = builds(&r.indexing);
    let scale = r
        .scale
        .as_ref()
        .map(|(docs, list)| serde_json::json!({ "docs": docs, "builds": builds(list) }));
    serde_json::json!({
        "command": r.command, "date": r.date, "cpu": r.cpu, "corpus": r.corpus,
        "stats": r.stats, "settings": r.settings, "checks": r.checks,
        "indexing": indexing, "scale": scale, "layouts": layouts,
    })
}

/// A grouped bar chart (log scale) of CPU ms per query, one panel per
/// layout and counting regime.
pub fn svg(r: &RunReport, path: &Path) -> Result<(), String> {
    let panel_list: Vec<(&LayoutReport, Regime)> = r
        .layouts
        .iter()
        .flat_map(|lr| lr.regimes().into_iter().map(move |g| (lr, g)))
        .collect();
    let panels = panel_list.len().max(1);
    let root = SVGBackend::new(path, (1400, 480 * panels as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let areas = root.split_evenly((panels, 1));
    let colors = [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0xff, 0x7f, 0x0e)];
    for ((lr, regime), area) in panel_list.into_iter().zip(areas) {
        let results: Vec<&ClassResult> = lr.of(regime).collect();
        let n = results.len();
        let values: Vec<f64> = results
            .iter()
            .flat_map(|c| [c.cpu_ms(Engine::Quarry), c.cpu_ms(Engine::Tantivy)])
            .filter(|v| *v > 0.0 && v.is_finite())
            .collect();
        let lo = values.iter().cloned().fold(f64::MAX, f64::min).max(1e-4);
        let hi = values.iter().cloned().fold(0.0, f64::max).max(lo * 10.0);
        let y0 = 10f64.powf(lo.log10().floor());
        let y1 = 10f64.powf(hi.log10().ceil());
        let mut chart = ChartBuilder::on(&area)
            .caption(
                format!(
                    "CPU ms per query (log scale), {} layout, {} regime: quarry {} seg, tantivy {} seg",
                    lr.layout.name(),
                    regime.name(),
                    lr.segments.0,
                    lr.segments.1
                ),
                ("sans-serif", 20),
            )
            .margin(10)
            .x_label_area_size(110)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n as f64, (y0..y1).log_scale())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("CPU ms / query")
            .draw()
            .map_err(|e| e.to_string())?;
        for (ei, e) in [Engine::Quarry, Engine::Tantivy].into_iter().enumerate() {
            let color = colors[ei];
            chart
                .draw_series(results.iter().enumerate().map(|(i, c)| {
                    let x0 = i as f64 + 0.1 + 0.4 * ei as f64;
                    Rectangle::new([(x0, y0), (x0 + 0.4, c.cpu_ms(e).max(y0))], color.filled())
                }))
                .map_err(|e| e.to_string())?
                .label(e.name())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        // Class labels under the groups, rotated.
        let style = ("sans-serif", 13)
            .into_font()
            .transform(FontTransform::Rotate90)
            .color(&BLACK);
        for (i, c) in results.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y0));
            root.draw(&Text::new(
                format!("{} {}", c.class, c.op),
                (px - 6, py + 6),
                style.clone(),
            ))
            .map_err(|e| e.to_string())?;
        }
    }
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}

/// The index bytes per component ([`index::COMPONENTS`]) of every build
/// that measured them, a column per build, in MiB.
fn component_table(s: &mut String, indexing: &[Build]) {
    let builds: Vec<_> = indexing
        .iter()
        .filter(|(_, _, ir)| ir.components.len() == index::COMPONENTS.len())
        .collect();
    if builds.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n### Index bytes per component (MiB)\n");
    let mut head = String::from("| component |");
    let mut rule = String::from("|---|");
    for (e, l, ir) in &builds {
        let _ = write!(head, " {} {} {}t |", e.name(), l.name(), ir.threads);
        rule.push_str("---:|");
    }
    let _ = writeln!(s, "{head}\n{rule}");
    for (i, c) in index::COMPONENTS.iter().enumerate() {
        let _ = write!(s, "| {c} |");
        for (_, _, ir) in &builds {
            let _ = write!(s, " {:.2} |", mib(ir.components[i]));
        }
        let _ = writeln!(s);
    }
    let _ = write!(s, "| total |");
    for (_, _, ir) in &builds {
        let _ = write!(s, " {:.2} |", mib(ir.components.iter().sum()));
    }
    let _ = writeln!(
        s,
        "\n\nquarry's components are its segments' sections (\"other\": headers, metadata sections, directories, the manifest, tombstones); \
         tantivy's are its `space_usage` (term dictionary, postings, positions, field norms, doc store, fast fields; \"other\": meta.json, delete bitsets, footers)."
    );
}

/// An indexing table (one row per build), what each directory keeps
/// beyond its last commit, the quarry/tantivy ratios of each build, and
/// the bytes per component.
fn indexing_section(s: &mut String, title: &str, indexing: &[Build]) {
    let _ = writeln!(s, "\n{title}\n");
    let _ = writeln!(
        s,
        "| engine | layout | writer threads | segments | docs/s (wall) | wall s | CPU s | peak RSS MiB | of which before indexing MiB | index MiB |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (e, l, ir) in indexing {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.0} | {:.0} | {:.1} |",
            e.name(),
            l.name(),
            ir.threads,
            ir.segments,
            ir.docs_per_s(),
            ir.wall_s,
            ir.cpu_s,
            ir.vm_hwm_kib as f64 / 1024.0,
            ir.vm_hwm_base_kib as f64 / 1024.0,
            mib(ir.bytes)
        );
    }
    for (e, l, ir) in indexing {
        if ir.dir_bytes > ir.bytes + ir.bytes / 100 {
            let _ = writeln!(
                s,
                "\n{} ({} layout): the directory also holds {:.1} MiB of files of earlier commits, which the engine keeps until a later commit; \"index MiB\" counts only the files the last commit references.",
                e.name(),
                l.name(),
                mib(ir.dir_bytes - ir.bytes)
            );
        }
    }
    let mut builds: Vec<(Layout, usize)> = Vec::new();
    for (_, l, ir) in indexing {
        if !builds.contains(&(*l, ir.threads)) {
            builds.push((*l, ir.threads));
        }
    }
    for (l, threads) in builds {
        let get = |e| {
            indexing
                .iter()
                .find(|(e2, l2, ir)| *e2 == e && *l2 == l && ir.threads == threads)
                .map(|x| &x.2)
        };
        if let (Some(q), Some(t)) = (get(Engine::Quarry), get(Engine::Tantivy)) {
            let _ = writeln!(
                s,
                "\n{} layout, {threads} writer thread(s), quarry/tantivy: docs/s {:.2}x, CPU s {:.2}x, peak RSS {:.2}x ({:.2}x above what each held before indexing, e.g. the corpus generator), index size {:.2}x.",
                l.name(),
                q.docs_per_s() / t.docs_per_s(),
                q.cpu_s / t.cpu_s,
                q.vm_hwm_kib as f64 / t.vm_hwm_kib as f64,
                q.vm_hwm_kib.saturating_sub(q.vm_hwm_base_kib) as f64
                    / t.vm_hwm_kib.saturating_sub(t.vm_hwm_base_kib).max(1) as f64,
                q.bytes as f64 / t.bytes as f64
            );
        }
    }
    component_table(s, indexing);
}
