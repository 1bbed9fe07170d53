// The console's live pages: the jobs table and a job's history follow the
// server's event streams (Server-Sent Events, sent with the session's
// cookie); nothing else runs here.
"use strict";

(function () {
  const jobs = document.getElementById("jobs");
  if (jobs) followJobs(jobs);
  const history = document.getElementById("events");
  if (history) followJob(history);

  function text(cell, value) {
    if (cell && cell.textContent !== value) cell.textContent = value;
  }

  function seconds(from, to) {
    if (!from || !to) return "";
    return ((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1) + " s";
  }

  function matches(table, job) {
    const filter = table.dataset;
    if (filter.state && job.state !== filter.state) return false;
    if (filter.pool && job.pool !== filter.pool) return false;
    if (filter.label) {
      const at = filter.label.indexOf("=");
      const key = filter.label.slice(0, at);
      if ((job.spec.labels || {})[key] !== filter.label.slice(at + 1)) return false;
    }
    return true;
  }

  function newRow(table, id) {
    const row = document.createElement("tr");
    row.dataset.job = id;
    for (const name of ["id", "state", "pool", "priority", "worker", "attempt", "steps", "created", "waited", "ran", "reason"]) {
      const cell = document.createElement("td");
      cell.className = name;
      row.appendChild(cell);
    }
    const link = document.createElement("a");
    link.href = "/console/jobs/" + encodeURIComponent(id);
    link.textContent = id.slice(0, 8);
    row.cells[0].appendChild(link);
    table.tBodies[0].prepend(row);
    return row;
  }

  function show(table, job, events) {
    let row = table.querySelector('tr[data-job="' + CSS.escape(job.id) + '"]');
    if (!matches(table, job)) {
      if (row) row.remove();
      return;
    }
    if (!row) row = newRow(table, job.id);
    const steps = events.filter((e) => e.kind === "step" && e.attempt === job.attempt).length;
    row.dataset.state = job.state;
    const cell = (name) => row.querySelector("td." + name);
    text(cell("state"), job.state);
    text(cell("pool"), job.pool);
    text(cell("priority"), (job.spec && job.spec.priority) || "normal");
    text(cell("worker"), job.worker || "-");
    text(cell("attempt"), String(job.attempt));
    text(cell("steps"), String(steps));
    text(cell("created"), job.created);
    text(cell("waited"), seconds(job.created, job.started));
    text(cell("ran"), seconds(job.started, job.ended));
    text(cell("reason"), job.reason || "");
  }

  function followJobs(table) {
    const source = new EventSource("/api/events?after=" + encodeURIComponent(table.dataset.after));
    const refresh = (event) => {
      const id = JSON.parse(event.data).job;
      fetch("/api/jobs/" + encodeURIComponent(id), { credentials: "same-origin" })
        .then((answer) => (answer.ok ? answer.json() : null))
        .then((body) => body && show(table, body.job, body.events))
        .catch(() => {});
    };
    source.addEventListener("state", refresh);
    source.addEventListener("step", refresh);
  }

  function line(event) {
    const data = event.data || {};
    if (event.kind === "state") {
      let words = "attempt " + event.attempt + ": " + data.state;
      if (data.worker) words += " on " + data.worker;
      if (data.reason) words += " (" + data.reason + ")";
      return words;
    }
    // As the server's pages word it (the client's event_line).
    const of = data.of ? "/" + data.of : "";
    const parts = data.why ? [data.why] : [];
    if (data.retries === 1) parts.push("after 1 retry");
    else if (data.retries > 1) parts.push("after " + data.retries + " retries");
    for (const made of data.prepared || []) parts.push("first " + made.label);
    parts.push(Math.round((data.seconds || 0) * 1000) + " ms");
    return "attempt " + event.attempt + ": step " + (data.step + 1) + of + " " +
      (data.meant || data.action || "(no step decided)") + " … " +
      String(data.status || "").replace(/_/g, " ") + " (" + parts.join("; ") + ")";
  }

  function followJob(list) {
    if (list.dataset.final === "true") return;
    const url = "/api/jobs/" + encodeURIComponent(list.dataset.job) + "/events?after=" +
      encodeURIComponent(list.dataset.after);
    const source = new EventSource(url);
    const add = (message) => {
      const event = JSON.parse(message.data);
      const item = document.createElement("li");
      item.textContent = event.at + " " + line(event);
      list.appendChild(item);
      if (event.kind === "state") text(document.getElementById("state"), event.data.state);
    };
    source.addEventListener("state", add);
    source.addEventListener("step", add);
    // The stream ends with the job's final state; no reconnection then.
    source.onerror = () => source.close();
  }
})();
