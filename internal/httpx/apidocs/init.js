// Renders the service's own OpenAPI document (same origin) with the
// embedded Redoc bundle; nothing is fetched from anywhere else.
(function () {
  var el = document.getElementById("reference");
  Redoc.init("/v1/openapi.json", {
    hideDownloadButton: false,
    expandResponses: "",
    jsonSampleExpandLevel: 2,
    pathInMiddlePanel: true,
    sortPropsAlphabetically: false,
    theme: { typography: { fontFamily: "system-ui, sans-serif", headings: { fontFamily: "system-ui, sans-serif" } } }
  }, el, function (err) {
    if (err) {
      el.textContent = "The API reference could not be rendered: " + err;
    }
    document.body.setAttribute("data-rendered", err ? "error" : "ok");
  });
})();
