// The page reads fine without this: it only adds the expand/collapse-all
// buttons, which are hidden until a script can make them work.
(function () {
  var controls = document.getElementById("controls");
  if (!controls) return;
  controls.hidden = false;
  controls.addEventListener("click", function (ev) {
    var want = ev.target && ev.target.getAttribute("data-details");
    if (!want) return;
    document.querySelectorAll("main details").forEach(function (d) {
      d.open = want === "open";
    });
  });
})();
