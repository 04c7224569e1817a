# syntax=docker/dockerfile:1
# ongrid-skills: build with `docker build -t ongrid-skills .`, run with docker-compose.yml.

# --- build: compile TypeScript and the native better-sqlite3 addon --------------------------
FROM node:20-bookworm-slim AS build
# better-sqlite3 compiles from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Prune rather than reinstall: keeps the addon compiled above, drops tsc, tsx and types.
RUN npm run build && npm prune --omit=dev

# --- runtime: production dependencies and compiled output only --------------------------------
FROM node:20-bookworm-slim AS runtime
# tini as PID 1: skills may leave orphans (e.g. after setsid) that get reparented to PID 1;
# node does not reap them, tini does. It forwards SIGTERM to node for the graceful stop.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    ONGRID_HTTP_HOST=0.0.0.0 \
    ONGRID_HTTP_PORT=8080 \
    ONGRID_SKILLS_EXTERNAL_DIRS=/etc/ongrid/skills \
    ONGRID_DATA_DIR=/var/lib/ongrid \
    ONGRID_API_TOKENS_FILE=/run/secrets/ongrid_tokens
WORKDIR /app
# Code stays root-owned, so the service user cannot modify what it runs.
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json ./
COPY skills ./skills
COPY examples ./examples
# The data dir belongs to the service user; a fresh named volume inherits this ownership.
RUN mkdir -p /etc/ongrid/skills /var/lib/ongrid \
 && chown node:node /var/lib/ongrid
VOLUME ["/etc/ongrid/skills", "/var/lib/ongrid"]
# The `node` user (uid 1000) of the official image.
USER node
EXPOSE 8080
# No curl in slim images: node's fetch does the probe.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.ONGRID_HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
