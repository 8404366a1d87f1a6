#!/usr/bin/env node
// Compatibility runner for kafkajs: runs every scenario of the compat suite
// against BROKERS and prints one line per scenario on stdout:
//
//   RESULT kafkajs <scenario> PASS|FAIL|SKIP <detail>
//
//   node scripts/compat/kafkajs.js BROKERS [scenario ...]
//
// kafkajs is installed in scripts/ (scripts/package.json). It has gzip
// built in; snappy, lz4 and zstd need codec packages and are checked only
// when those are installed. Progress goes to stderr. Names end in a per-run
// suffix, so reruns against one long-lived broker do not collide. Every wait
// polls for a condition and gives up at a deadline.
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const { Kafka, logLevel, CompressionTypes, CompressionCodecs, ConfigResourceTypes } = require('kafkajs')

// Codec packages from package.json, when installed; a codec that cannot
// load stays unregistered and its check is reported as not done.
try {
  CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')
} catch (e) {}
try {
  const LZ4 = require('kafkajs-lz4')
  const codec = new LZ4().codec
  codec().compress // loads the native lz4 module now, not mid-scenario
  CompressionCodecs[CompressionTypes.LZ4] = codec
} catch (e) {}

const CLIENT = 'kafkajs'
const STEP_MS = 20000
const CONFIG_WAIT_MS = 10000 // for a config change to show in describeConfigs
const RUN = `-${Date.now() % 100000000}`

class Failure extends Error {}
class Skip extends Error {}

function log(msg) {
  process.stderr.write(`${CLIENT}: ${msg}\n`)
}

function check(cond, msg) {
  if (!cond) throw new Failure(msg)
}

// Errors raised inside eachMessage handlers, rethrown by waitUntil.
let handlerErrors = []

async function waitUntil(what, cond, timeoutMs = STEP_MS) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (handlerErrors.length) throw handlerErrors[0]
    if (await cond()) return
    if (Date.now() > deadline) throw new Failure(`timed out after ${timeoutMs / 1000}s waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

// security is the ssl and sasl settings of KLOG_COMPAT_SECURITY's file, a
// Java client config klog up --secure wrote (app.properties: SASL_SSL with
// SCRAM-SHA-512; app-mtls.properties: mTLS with the app's certificate),
// read from its librdkafka twin beside it (NAME.librdkafka.properties:
// the same settings with PEM files and the user and password as plain
// keys); {} without one.
function security() {
  const file = (process.env.KLOG_COMPAT_SECURITY || '').trim()
  if (!file) return {}
  const fs = require('fs')
  const twin = file.replace(/\.properties$/, '.librdkafka.properties')
  const c = {}
  for (const line of fs.readFileSync(twin, 'utf8').split('\n')) {
    const t = line.trim()
    if (!t || t[0] === '#' || t[0] === '!') continue
    const i = t.indexOf('=')
    if (i < 0) throw new Error(`${twin}: not key=value: ${t}`)
    c[t.slice(0, i).trim()] = t.slice(i + 1).trim()
  }
  const out = {}
  const protocol = c['security.protocol']
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    out.ssl = { ca: [fs.readFileSync(c['ssl.ca.location'], 'utf8')] }
    if (c['ssl.certificate.location']) out.ssl.cert = fs.readFileSync(c['ssl.certificate.location'], 'utf8')
    if (c['ssl.key.location']) out.ssl.key = fs.readFileSync(c['ssl.key.location'], 'utf8')
  }
  if (protocol === 'SASL_SSL' || protocol === 'SASL_PLAINTEXT') {
    out.sasl = { mechanism: c['sasl.mechanisms'].toLowerCase(), username: c['sasl.username'], password: c['sasl.password'] }
  }
  log(`connecting over ${protocol}` + (out.sasl ? ` ${c['sasl.mechanisms']} as ${c['sasl.username']}` : ` with client certificate ${c['ssl.certificate.location']}`))
  return out
}

function newKafka(brokers) {
  return new Kafka({
    clientId: 'klog-compat',
    brokers: brokers.split(','),
    ...security(),
    logLevel: logLevel.WARN,
    logCreator: () => ({ level, log: entry }) => {
      process.stderr.write(`${CLIENT}: [${level}] ${entry.message} ${entry.error || ''}\n`)
    },
  })
}

// withAdmin runs fn with a connected admin client.
async function withAdmin(kafka, fn) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.disconnect()
  }
}

async function createTopic(kafka, topic, numPartitions, configEntries = []) {
  await withAdmin(kafka, async admin => {
    const created = await admin.createTopics({ topics: [{ topic, numPartitions, configEntries }], waitForLeaders: true })
    check(created, `createTopics(${topic}) reported the topic already exists`)
  })
}

// readAll consumes topic from the start with a fresh group until every
// partition is read to its high watermark, or, with endValue, until every
// partition delivered a record with that value (for transactional topics,
// whose high watermark counts markers). Returns the messages with partition.
async function readAll(kafka, topic, partitions, { readUncommitted = true, endValue = null } = {}) {
  const groupId = `compat-kj-reader-${Math.random().toString(36).slice(2)}${RUN}`
  const high = await withAdmin(kafka, admin => admin.fetchTopicOffsets(topic))
  const consumer = kafka.consumer({ groupId, readUncommitted, maxWaitTimeInMs: 100 })
  const msgs = []
  const next = new Map()
  const ended = new Set()
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        msgs.push({ partition, ...message })
        next.set(partition, Number(message.offset) + 1)
        if (endValue !== null && message.value && message.value.toString() === endValue) ended.add(partition)
      },
    })
    await waitUntil(`${topic} read to its end`, () => {
      if (endValue !== null) return ended.size === partitions
      return high.every(h => Number(h.high) === 0 || (next.get(h.partition) || 0) >= Number(h.high))
    })
  } finally {
    await consumer.disconnect()
  }
  return msgs
}

function str(b) {
  return b === null || b === undefined ? null : b.toString()
}

// normHeaders turns a consumed headers object into [name, value] pairs in
// order (kafkajs gives repeated names as arrays).
function normHeaders(h) {
  const out = []
  for (const [k, v] of Object.entries(h || {})) {
    for (const one of Array.isArray(v) ? v : [v]) out.push([k, str(one)])
  }
  return out
}

async function scenarioAdmin(kafka) {
  const topic = `compat-kj-admin${RUN}`
  await createTopic(kafka, topic, 3, [{ name: 'retention.ms', value: '3600000' }])
  return withAdmin(kafka, async admin => {
    // listTopics may ask a broker that learns of the topic a moment after
    // the one that answered createTopics, as on any Kafka cluster.
    await waitUntil(`listTopics to list ${topic}`, async () => (await admin.listTopics()).includes(topic))
    const md = await admin.fetchTopicMetadata({ topics: [topic] })
    check(md.topics[0].partitions.length === 3, `fetchTopicMetadata: ${md.topics[0].partitions.length} partitions, want 3`)
    const describe = async () => {
      const r = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false })
      const entries = r.resources[0].configEntries
      return Object.fromEntries(entries.map(e => [e.configName, e.configValue]))
    }
    // Kafka's brokers apply a config from the metadata log after the
    // controller acknowledged the change, so a describe right after an
    // alter may still show the old value: wait for the new one.
    const waitRetention = async (want, when) => {
      let got
      const deadline = Date.now() + CONFIG_WAIT_MS
      while ((got = (await describe())['retention.ms']) !== want) {
        check(Date.now() < deadline, `${when}: describeConfigs retention.ms is ${got}, want ${want} (waited ${CONFIG_WAIT_MS} ms)`)
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    }
    await waitRetention('3600000', 'after create')
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }],
    })
    await waitRetention('7200000', 'after alterConfigs')
    await admin.createPartitions({ topicPartitions: [{ topic, count: 4 }] })
    await waitUntil('4 partitions', async () => {
      const m = await admin.fetchTopicMetadata({ topics: [topic] })
      return m.topics[0].partitions.length === 4
    })
    await admin.deleteTopics({ topics: [topic], timeout: STEP_MS })
    await waitUntil(`${topic} to be deleted`, async () => !(await admin.listTopics()).includes(topic))
    return 'createTopics (3 partitions, retention.ms), listTopics, fetchTopicMetadata, describeConfigs, alterConfigs, createPartitions to 4, deleteTopics'
  })
}

async function scenarioProduceConsume(kafka) {
  const topic = `compat-kj-pc${RUN}`
  await createTopic(kafka, topic, 2)
  const base = Date.now() - 3600 * 1000
  const want = []
  const messages = []
  for (let i = 0; i < 60; i++) {
    const key = i % 10 === 9 ? null : `key-${i}`
    const value = i === 7 ? null : `value ${i} ✓`
    const headers = i % 2 === 0 ? { dup: ['one', 'two'], i: String(i) } : {}
    if (i % 3 === 0) headers.empty = ''
    const timestamp = String(base + i * 1000)
    messages.push({ partition: i % 2, key, value, headers, timestamp })
    want.push({ partition: i % 2, key, value, headers: normHeaders(headers), timestamp })
  }
  const producer = kafka.producer()
  await producer.connect()
  try {
    await producer.send({ topic, acks: -1, messages })
  } finally {
    await producer.disconnect()
  }
  const got = (await readAll(kafka, topic, 2)).map(m => ({
    partition: m.partition,
    key: str(m.key),
    value: str(m.value),
    headers: normHeaders(m.headers),
    timestamp: m.timestamp,
  }))
  for (const p of [0, 1]) {
    const w = want.filter(r => r.partition === p).map(r => JSON.stringify(r))
    const g = got.filter(r => r.partition === p).map(r => JSON.stringify(r))
    let first = w.findIndex((r, i) => r !== g[i])
    if (first < 0 && g.length !== w.length) first = w.length
    check(first < 0, `partition ${p}: ${g.length} records, want ${w.length}; first difference at ${first}: got ${g[first]} want ${w[first]}`)
  }
  return `${got.length} records: keys (some null), a null value, duplicate and empty headers, explicit timestamps, 2 partitions`
}

async function scenarioCompression(kafka) {
  const checked = []
  const missing = []
  const codecs = [
    ['gzip', CompressionTypes.GZIP],
    ['snappy', CompressionTypes.Snappy],
    ['lz4', CompressionTypes.LZ4],
    ['zstd', CompressionTypes.ZSTD],
  ]
  for (const [name, type] of codecs) {
    // Codecs kafkajs lacks are placeholders that throw when asked for.
    try {
      CompressionCodecs[type]()
    } catch (e) {
      missing.push(name)
      continue
    }
    const topic = `compat-kj-z-${name}${RUN}`
    await createTopic(kafka, topic, 1)
    const values = Array.from({ length: 300 }, (_, i) => `${name} record ${i} ${'x'.repeat(50)}`)
    const producer = kafka.producer()
    await producer.connect()
    try {
      for (let i = 0; i < values.length; i += 100) {
        await producer.send({ topic, compression: type, messages: values.slice(i, i + 100).map(value => ({ value, partition: 0 })) })
      }
    } finally {
      await producer.disconnect()
    }
    const got = (await readAll(kafka, topic, 1)).map(m => str(m.value))
    check(JSON.stringify(got) === JSON.stringify(values), `${name}: consumed ${got.length} records differing from 300 produced`)
    checked.push(name)
  }
  let detail = `codecs checked: ${checked.join(' ')} (300 records each)`
  if (missing.length) detail += `; not checked: ${missing.join(', ')} (kafkajs needs a codec package, none installed)`
  return detail
}

async function scenarioOffsetsByTime(kafka) {
  const topic = `compat-kj-time${RUN}`
  await createTopic(kafka, topic, 1)
  const base = Date.now() - 3600 * 1000
  const producer = kafka.producer()
  await producer.connect()
  try {
    await producer.send({
      topic,
      messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `t${i}`, timestamp: String(base + i * 1000) })),
    })
  } finally {
    await producer.disconnect()
  }
  return withAdmin(kafka, async admin => {
    // kafkajs answers "no record at or after" with the high watermark.
    const cases = [[base - 5000, 0], [base, 0], [base + 4000, 4], [base + 4500, 5], [base + 9000, 9], [base + 60000, 10]]
    for (const [ts, want] of cases) {
      const r = await admin.fetchTopicOffsetsByTimestamp(topic, ts)
      check(r.length === 1 && Number(r[0].offset) === want, `fetchTopicOffsetsByTimestamp(base+${ts - base}) = ${JSON.stringify(r)}, want offset ${want}`)
    }
    return 'fetchTopicOffsetsByTimestamp: before the first -> 0, exact -> 4, between -> 5, last -> 9, after the end -> high watermark 10'
  })
}

// member starts a group member that records what it reads and its latest
// assignment.
async function member(kafka, groupId, topic, name) {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 100 })
  const m = { name, consumer, records: [], assigned: [] }
  consumer.on(consumer.events.GROUP_JOIN, e => {
    m.assigned = (e.payload.memberAssignment[topic] || []).slice().sort()
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      m.records.push({ partition, value: str(message.value) })
    },
  })
  return m
}

async function scenarioGroup(kafka) {
  const topic = `compat-kj-group${RUN}`
  const groupId = `compat-kj-group${RUN}`
  await createTopic(kafka, topic, 4)
  const n = 200
  const a = await member(kafka, groupId, topic, 'a')
  const b = await member(kafka, groupId, topic, 'b')
  try {
    await waitUntil('the group to split 4 partitions 2 + 2', () =>
      a.assigned.length === 2 && b.assigned.length === 2 && !a.assigned.some(p => b.assigned.includes(p)), 3 * STEP_MS)
    // Produce only once the split is done, so no record is read before a
    // rebalance moves its partition.
    const producer = kafka.producer()
    await producer.connect()
    try {
      await producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ partition: i % 4, value: `g${i}` })) })
    } finally {
      await producer.disconnect()
    }
    await waitUntil(`${n} records read by two members`, () => a.records.length + b.records.length >= n)
    const values = [...a.records, ...b.records].map(r => r.value).sort()
    const want = Array.from({ length: n }, (_, i) => `g${i}`).sort()
    check(JSON.stringify(values) === JSON.stringify(want), `two members read ${values.length} records (${new Set(values).size} distinct), want ${n} once`)
    for (const m of [a, b]) {
      check(m.records.every(r => m.assigned.includes(r.partition)), `member ${m.name} read partitions it does not own`)
    }
  } finally {
    // Disconnecting commits what was read (autoCommit) and leaves the group.
    await a.consumer.disconnect()
    await b.consumer.disconnect()
  }
  const producer = kafka.producer()
  await producer.connect()
  try {
    await producer.send({ topic, messages: Array.from({ length: 8 }, (_, i) => ({ partition: i % 4, value: `late${i}` })) })
  } finally {
    await producer.disconnect()
  }
  const high = await withAdmin(kafka, admin => admin.fetchTopicOffsets(topic))
  const c = await member(kafka, groupId, topic, 'c')
  try {
    await waitUntil('the restarted member to read the 8 new records', () => c.records.length >= 8, 2 * STEP_MS)
    await waitUntil('the restarted member to own all 4 partitions', () => c.assigned.length === 4)
  } finally {
    await c.consumer.disconnect()
  }
  const got = c.records.map(r => r.value).sort()
  const wantLate = Array.from({ length: 8 }, (_, i) => `late${i}`).sort()
  check(JSON.stringify(got) === JSON.stringify(wantLate), `restarted member read ${got.slice(0, 12)}, want only the 8 records after the commit`)
  const offs = await withAdmin(kafka, admin => admin.fetchOffsets({ groupId, topics: [topic] }))
  for (const p of offs[0].partitions) {
    const h = high.find(x => x.partition === p.partition)
    check(p.offset === h.high, `committed offset of partition ${p.partition} = ${p.offset}, want ${h.high}`)
  }
  return `two members split 4 partitions, ${n} records once; restarted member resumed at the committed offsets`
}

async function scenarioIdempotent(kafka) {
  const topic = `compat-kj-idem${RUN}`
  await createTopic(kafka, topic, 2)
  const n = 1000
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    for (let i = 0; i < n; i += 100) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: 100 }, (_, j) => ({ partition: (i + j) % 2, value: `i${i + j}` })) })
    }
  } finally {
    await producer.disconnect()
  }
  const got = await readAll(kafka, topic, 2)
  for (const p of [0, 1]) {
    const vals = got.filter(m => m.partition === p).map(m => str(m.value))
    const want = Array.from({ length: n / 2 }, (_, k) => `i${2 * k + p}`)
    check(JSON.stringify(vals) === JSON.stringify(want), `partition ${p} holds ${vals.length} records (${new Set(vals).size} distinct), want ${want.length} in order`)
  }
  return `${n} records on 2 partitions with an idempotent producer, each once and in order`
}

function txnProducer(kafka, id) {
  return kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 60000 })
}

async function scenarioTransactions(kafka) {
  const topic = `compat-kj-txn${RUN}`
  await createTopic(kafka, topic, 2)
  const producer = txnProducer(kafka, `compat-kj-txn${RUN}`)
  await producer.connect()
  try {
    let tx = await producer.transaction()
    await tx.send({ topic, messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, value: `committed-${i}` })) })
    await tx.commit()
    tx = await producer.transaction()
    await tx.send({ topic, messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, value: `aborted-${i}` })) })
    await tx.abort()
    tx = await producer.transaction()
    await tx.send({ topic, messages: [0, 1].map(partition => ({ partition, value: 'end' })) })
    await tx.commit()
  } finally {
    await producer.disconnect()
  }
  const rc = (await readAll(kafka, topic, 2, { readUncommitted: false, endValue: 'end' })).map(m => str(m.value)).filter(v => v !== 'end').sort()
  const want = Array.from({ length: 20 }, (_, i) => `committed-${i}`).sort()
  check(JSON.stringify(rc) === JSON.stringify(want), `read_committed saw ${rc.length} records (${rc.filter(v => v.startsWith('aborted')).length} aborted), want the 20 committed`)
  const ru = (await readAll(kafka, topic, 2, { readUncommitted: true, endValue: 'end' })).filter(m => str(m.value) !== 'end')
  check(ru.length === 40, `read_uncommitted saw ${ru.length} records, want 40`)
  return 'commit 20, abort 20, commit end records: read_committed saw the 20 committed, read_uncommitted all 40'
}

async function scenarioConsumeTransformProduce(kafka) {
  const src = `compat-kj-ctp-in${RUN}`
  const dst = `compat-kj-ctp-out${RUN}`
  const groupId = `compat-kj-ctp${RUN}`
  const n = 40
  await createTopic(kafka, src, 2)
  await createTopic(kafka, dst, 2)
  const plain = kafka.producer()
  await plain.connect()
  try {
    await plain.send({ topic: src, messages: Array.from({ length: n }, (_, i) => ({ partition: i % 2, value: `in-${i}` })) })
  } finally {
    await plain.disconnect()
  }
  const producer = txnProducer(kafka, `compat-kj-ctp${RUN}`)
  await producer.connect()
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 100 })
  let processed = 0
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [src], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        try {
          const tx = await producer.transaction()
          await tx.send({ topic: dst, messages: [{ partition, value: `out-${str(message.value).slice(3)}` }] })
          await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition, offset: String(Number(message.offset) + 1) }] }] })
          await tx.commit()
          processed++
        } catch (e) {
          handlerErrors.push(e)
        }
      },
    })
    await waitUntil(`${n} records transformed`, () => processed >= n, 3 * STEP_MS)
  } finally {
    await consumer.disconnect()
    await producer.disconnect()
  }
  // A last transaction puts an end record on each output partition, so a
  // read_committed reader knows where the output ends.
  const closer = txnProducer(kafka, `compat-kj-ctp-end${RUN}`)
  await closer.connect()
  try {
    const tx = await closer.transaction()
    await tx.send({ topic: dst, messages: [0, 1].map(partition => ({ partition, value: 'end' })) })
    await tx.commit()
  } finally {
    await closer.disconnect()
  }
  const offs = await withAdmin(kafka, admin => admin.fetchOffsets({ groupId, topics: [src] }))
  for (const p of offs[0].partitions) {
    check(p.offset === String(n / 2), `group offset of ${src}[${p.partition}] = ${p.offset}, want ${n / 2}`)
  }
  const out = (await readAll(kafka, dst, 2, { readUncommitted: false, endValue: 'end' })).map(m => str(m.value)).filter(v => v !== 'end').sort()
  const want = Array.from({ length: n }, (_, i) => `out-${i}`).sort()
  check(JSON.stringify(out) === JSON.stringify(want), `output holds ${out.length} records (${new Set(out).size} distinct), want ${n} exactly once`)
  return `${n} records, each in a transaction with sendOffsets: output exactly once, group offsets at the end`
}

const SCENARIOS = [
  ['admin', scenarioAdmin],
  ['produce-consume', scenarioProduceConsume],
  ['compression', scenarioCompression],
  ['offsets-by-time', scenarioOffsetsByTime],
  ['group', scenarioGroup],
  ['idempotent', scenarioIdempotent],
  ['transactions', scenarioTransactions],
  ['consume-transform-produce', scenarioConsumeTransformProduce],
]

function oneLine(s) {
  return String(s).split(/\s+/).join(' ').trim().slice(0, 300)
}

async function main() {
  const brokers = process.argv[2]
  if (!brokers) {
    process.stderr.write('usage: kafkajs.js BROKERS [scenario ...]\n')
    return 2
  }
  const only = new Set(process.argv.slice(3))
  log(`kafkajs ${require('kafkajs/package.json').version}`)
  const kafka = newKafka(brokers)
  let failed = 0
  for (const [name, fn] of SCENARIOS) {
    if (only.size && !only.has(name)) continue
    handlerErrors = []
    const start = Date.now()
    log(`--- ${name}`)
    let status
    let detail
    try {
      detail = await fn(kafka)
      status = 'PASS'
    } catch (e) {
      if (e instanceof Skip) {
        status = 'SKIP'
      } else {
        status = 'FAIL'
        failed++
        if (!(e instanceof Failure)) process.stderr.write(`${e.stack}\n`)
      }
      detail = e instanceof Failure || e instanceof Skip ? e.message : `${e.name}: ${e.message}`
    }
    log(`${name}: ${status} in ${((Date.now() - start) / 1000).toFixed(1)}s`)
    process.stdout.write(`RESULT ${CLIENT} ${name} ${status} ${oneLine(detail) || 'ok'}\n`)
  }
  return failed ? 1 : 0
}

main().then(
  code => process.exit(code),
  e => {
    process.stderr.write(`${e.stack}\n`)
    process.exit(1)
  },
)
