// Start: draw the view the address names, and again whenever it changes.
"use strict";

window.addEventListener("hashchange", route);
route();
