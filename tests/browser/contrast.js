// The WCAG 2 contrast ratio of every text in an output area, against the background it is painted on
// (element backgrounds composited from the page down, ancestor opacity applied). Used by test_person.py.
(root) => {
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (t, b) => { const a = t[3] + b[3] * (1 - t[3]); if (a === 0) return [0, 0, 0, 0];
    return [0, 1, 2].map(i => (t[i] * t[3] + b[i] * b[3] * (1 - t[3])) / a).concat([a]); };
  const background = el => { const layers = []; for (let e = el; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
    let c = [255, 255, 255, 1]; for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c); return c; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const found = [];
  for (const el of root.querySelectorAll('.jp-OutputArea-output *')) {  // ours, not Lab's prompts
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || el.closest('button, input, select, textarea, .widget-button')) continue;
    let opacity = 1; for (let e = el; e; e = e.parentElement) opacity *= parseFloat(getComputedStyle(e).opacity);
    const bg = background(el); const fg = parse(style.color);
    const text = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
    const l1 = lum(text), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    found.push({ratio: Math.round(ratio * 100) / 100, text: el.textContent.trim().slice(0, 60), color: style.color, bg: bg.map(Math.round).join(',')});
  }
  return found;
}
