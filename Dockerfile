# The gateway image used by docker-compose.yml. Node 20; TypeScript runs through tsx (a runtime
# dependency), so there is no build step. Checked by reading: no Docker engine runs where this
# repository is developed.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY config ./config
COPY migrations ./migrations
COPY tsconfig.json ./
# .data holds the in-process Adyen sandbox's TLS certificate.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
ENV NODE_ENV=production PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=6 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/switchyard.js", "start", "--role", "all"]
