# syntax=docker/dockerfile:1
# Node 24 (the current LTS); `--build-arg NODE_MAJOR=20` builds on Node 20.19+ instead. On Node 24
# Almanac loads better-sqlite3 13 (prebuilt, Node-API); 12, for Node 20, still installs and builds.
ARG NODE_MAJOR=24
# Build stage: compile native modules (better-sqlite3 12) with the toolchain, then drop dev deps.
FROM node:${NODE_MAJOR}-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY clients/typescript/package.json ./clients/typescript/
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY tsconfig.json ./
# The esbuild bundle in dist/ is what bin/almanac.js runs (half the start-up time and memory).
RUN npm run build && npm prune --omit=dev

# Runtime stage: no compiler, non-root, healthcheck against /healthz.
FROM node:${NODE_MAJOR}-bookworm-slim
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The Node flags of `npm start`: a 16 MB young generation, old generation grown by half (docs/benchmarks.md).
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "bin/almanac.js", "serve"]
