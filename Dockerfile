# Build stage: compile TypeScript with the dev dependencies. No `# syntax=` line: the builder's own
# Dockerfile frontend is enough, and a build pulls nothing but the base image.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY schemas ./schemas
# the access review's page, bundled into dist/ui/ by the build
COPY ui ./ui
# bundles the standalone entry points (dist/src/server.js, dist/src/bin.js and dist/src/chunks/); the
# build's last step notes what it built from (build-if-changed.mjs --stamp)
COPY scripts/bundle.mjs scripts/build-if-changed.mjs ./scripts/
# dist/src, dist/migrations, dist/schemas, dist/ui and dist/pglite (the embedded database's snapshot)
RUN npm run build

# Runtime stage: production dependencies and the compiled service only, as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY seeds ./seeds
# `team-access schemas --check` compares with the repository's copy
COPY schemas/openapi.json ./schemas/openapi.json
# The bin runs from the image (here on an in-memory database). The first `npx team-access` links the
# package into ~/.npm/_npx and chmods its bin, which only root may do to root's files: done now, as
# root, then ~/.npm given to the user node, so `docker compose exec team-access npx team-access migrate`
# works as that user.
RUN HOME=/home/node DATA_DIR=memory:// npx --offline team-access migrate \
 && chown -R node:node /home/node/.npm \
 && mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node directly, not npm: npm does not forward SIGTERM, and the service closes gracefully on it; with
# the Node flags of `npm start` (README, "Node's own flags": why)
CMD ["node", "--v8-pool-size=1", "--max-semi-space-size=4", "dist/src/server.js"]
