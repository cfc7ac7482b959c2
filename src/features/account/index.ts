// The account feature's public face: what other features (home) and the composition root use.
export { htmlErrors, pageHeaders } from "./http.js";
export { Layout } from "./layout.jsx";
export { registerAccount } from "./route.js";
export { AUTH_EXPIRIES } from "./sweep.js";
export { ErrorPage } from "./views.jsx";
