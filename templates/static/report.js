/* Results tracker report: draws the charts (plotly.js, bundled) and sorts tables.
   No network: every chart's figure is in its element's data-figure attribute. */
(function () {
  "use strict";

  // A legend entry longer than the chart is wide would be cut by its edge: break it into
  // lines after a space, "_" or "-" (names are escaped text: no entity is ever split).
  function wrapName(name, width) {
    if (typeof name !== "string" || name.length <= width || name.indexOf("<br>") >= 0) {
      return name;
    }
    var lines = [];
    var line = "";
    name.split(/(?<=[ _\-])/).forEach(function (piece) {
      if (line && (line + piece).length > width) {
        lines.push(line);
        line = "";
      }
      line += piece;
    });
    lines.push(line);
    return lines.join("<br>");
  }

  function fitLegend(el, figure) {
    var width = Math.max(16, Math.floor((el.clientWidth - 70) / 7.5));
    figure.data.forEach(function (trace) {
      if (trace.showlegend !== false && trace.name) {
        trace.name = wrapName(trace.name, width);
      }
    });
  }

  function drawCharts() {
    if (typeof Plotly === "undefined") {
      return;
    }
    var config = { responsive: true, displaylogo: false, scrollZoom: false };
    var drawn = [];
    document.querySelectorAll(".chart[data-figure]").forEach(function (el) {
      var figure = JSON.parse(el.getAttribute("data-figure"));
      fitLegend(el, figure);
      drawn.push(Plotly.newPlot(el, figure.data, figure.layout, config).then(fit));
    });
    Promise.all(drawn).then(function () {
      document.documentElement.setAttribute("data-charts", "drawn");
    });
  }

  // On a narrow screen a long legend or long bar names leave the plot too small for
  // its axis titles: grow the chart by what the plot lacks, and put bar names inside.
  var MIN_PLOT_HEIGHT = 300;
  var MIN_PLOT_WIDTH = 200;

  // Bars whose names leave the plot too narrow: each name on its own line above its bar
  // (wrapped to the chart's width), the bars the whole width; returns the new height.
  function namesAboveBars(gd, update) {
    var names = (gd.data[0] && gd.data[0].y) || [];
    var width = Math.max(16, Math.floor((gd.clientWidth - 30) / 6.5));
    var wrapped = names.map(function (name) {
      return wrapName(String(name), width);
    });
    var lines = wrapped.reduce(function (most, name) {
      return Math.max(most, name.split("<br>").length);
    }, 1);
    var slot = 24 + 14 * lines;
    update["yaxis.showticklabels"] = false;
    update["yaxis.automargin"] = false;
    update["margin.l"] = 10;
    update["margin.t"] = 14 * lines + 6;
    update.bargap = 1 - 16 / slot;
    update.annotations = wrapped.map(function (name, i) {
      return {
        xref: "paper", x: 0, yref: "y", y: names[i], yanchor: "bottom", yshift: 9,
        xanchor: "left", align: "left", showarrow: false, text: name, font: { size: 11 },
      };
    });
    var margins = gd._fullLayout.margin;
    return slot * names.length + 14 * lines + 6 + margins.b + 40;
  }

  function fit(gd) {
    var layout = gd._fullLayout;
    var size = layout._size;
    var update = {};
    var height = layout.height;
    if (size.w < MIN_PLOT_WIDTH && layout.yaxis && layout.yaxis.type === "category") {
      height = namesAboveBars(gd, update);
    }
    if (size.h < MIN_PLOT_HEIGHT) {
      height += MIN_PLOT_HEIGHT - size.h;
    }
    // A legend taller than the room it was given scrolls, hiding entries: give it the room.
    var legend = layout.legend;
    if (legend && legend._effHeight && legend._height > legend._effHeight + 1) {
      height += legend._height - legend._effHeight + 10;
    }
    if (height !== layout.height) {
      update.height = height;
    }
    if (Object.keys(update).length) {
      return Plotly.relayout(gd, update);
    }
    return gd;
  }

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) {
      return "";
    }
    var sort = cell.getAttribute("data-sort");
    return sort !== null ? sort : cell.textContent.trim();
  }

  function compare(a, b) {
    var x = parseFloat(a);
    var y = parseFloat(b);
    var xNum = a !== "" && !isNaN(x);
    var yNum = b !== "" && !isNaN(y);
    if (xNum && yNum) {
      return x - y;
    }
    if (xNum !== yNum) {
      return xNum ? -1 : 1;
    }
    return a.localeCompare(b);
  }

  function isDetails(row) {
    return row.classList.contains("members");
  }

  function makeSortable(table) {
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      th.classList.add("sort-header");
      th.setAttribute("tabindex", "0");
      th.setAttribute("title", "Sort by this column");
      function sort() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (other) {
          other.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        // A details row (class "members") belongs to the row before it: they move together.
        var rows = Array.prototype.filter.call(body.rows, function (row) {
          return !isDetails(row);
        });
        var details = rows.map(function (row) {
          var next = row.nextElementSibling;
          return next && isDetails(next) ? next : null;
        });
        var order = rows.map(function (_row, i) {
          return i;
        });
        order.sort(function (i, j) {
          var by = compare(cellValue(rows[i], index), cellValue(rows[j], index));
          return ascending ? by : -by;
        });
        order.forEach(function (i) {
          body.appendChild(rows[i]);
          if (details[i]) {
            body.appendChild(details[i]);
          }
        });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          sort();
        }
      });
    });
  }

  // Filters of a table (the findings pages): each select keeps the rows whose
  // data-<name> attribute equals its value; "all" (empty) keeps every row.
  function makeFilter(form) {
    var table = document.getElementById(form.getAttribute("data-table"));
    if (!table) {
      return;
    }
    var selects = form.querySelectorAll("select[data-filter]");
    var counter = form.querySelector("[data-filter-count]");
    function apply() {
      var rows = table.tBodies[0].rows;
      var shown = 0;
      var total = 0;
      Array.prototype.forEach.call(rows, function (row) {
        var keep = Array.prototype.every.call(selects, function (select) {
          var name = select.getAttribute("data-filter");
          return !select.value || row.getAttribute("data-" + name) === select.value;
        });
        row.hidden = !keep;
        if (!isDetails(row)) {
          total += 1;
          shown += keep ? 1 : 0;
        }
      });
      if (counter) {
        counter.textContent = shown + " of " + total + " shown";
      }
    }
    Array.prototype.forEach.call(selects, function (select) {
      select.addEventListener("change", apply);
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
    });
    form.hidden = false;
    apply();
  }

  // A table wider than its box scrolls inside it: say so at the top of the box (a line that
  // stays in view while the table scrolls under it), and shade the edge where more columns
  // wait (class "scrolls"); nothing is said of a table that fits.
  function markScrolling() {
    document.querySelectorAll(".table-scroll").forEach(function (box) {
      var cue = box.firstElementChild;
      if (!cue || !cue.classList.contains("scroll-cue")) {
        cue = document.createElement("p");
        cue.className = "scroll-cue";
        cue.textContent = "Scroll sideways for more columns \u2192";
        cue.hidden = true;
        box.insertBefore(cue, box.firstChild);
      }
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("scrolls", scrolls);
      cue.hidden = !scrolls;
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("form.filters[data-table]").forEach(makeFilter);
  markScrolling();
  window.addEventListener("resize", markScrolling);
  document.addEventListener("toggle", markScrolling, true);
  drawCharts();
})();
