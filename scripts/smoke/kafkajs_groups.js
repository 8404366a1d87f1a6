// Consumer-group smoke test with kafkajs.
//
// Two consumers in one group share a 4-partition topic. Once the group is
// stable, 200 keyed records with headers are produced; every record is
// consumed exactly once, by the one member that owns its partition, with its
// headers intact, and the offsets are committed. Then one consumer is
// restarted: after the rebalance both members resume at the committed
// offsets, so 20 more records are again consumed exactly once and nothing old
// comes back.
//
//   node scripts/smoke/kafkajs_groups.js BROKERS
//
// Every wait polls for a condition and gives up at a deadline.
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const { Kafka, logLevel } = require('kafkajs')

const PARTITIONS = 4
const STEP_TIMEOUT_MS = 30000

class Failure extends Error {}

// quietLog prints kafkajs's warnings and errors, except the ones every
// rebalance produces (heartbeats answered REBALANCE_IN_PROGRESS).
const quietLog = () => ({ level, log: entry }) => {
  const text = `${entry.message} ${entry.error || ''}`
  if (/rebalancing/i.test(text)) return
  console.error(`kafkajs ${level === logLevel.ERROR ? 'ERROR' : 'WARN'}: ${text}`)
}

function log(msg) {
  console.log('kafkajs-groups: ' + msg)
}

async function waitUntil(what, cond, timeoutMs = STEP_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const err = failures[0]
    if (err) throw err
    if (await cond()) return
    if (Date.now() > deadline) throw new Failure(`timed out after ${timeoutMs / 1000}s waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

// Errors found inside eachMessage handlers; a throw there would only make
// kafkajs retry the batch, so they are collected and raised by waitUntil.
const failures = []

function recordHeaders(i) {
  return { seq: String(i), dup: ['a', 'b'], bin: Buffer.from([0, i % 256, 255]) }
}

function checkHeaders(i, headers) {
  const want = recordHeaders(i)
  const seq = headers.seq && headers.seq.toString()
  const dup = Array.isArray(headers.dup) ? headers.dup.map(b => b.toString()) : headers.dup
  const bin = headers.bin
  if (seq !== want.seq || JSON.stringify(dup) !== JSON.stringify(want.dup) || !Buffer.isBuffer(bin) || !bin.equals(want.bin)) {
    return `record ${i}: headers ${JSON.stringify({ seq, dup, bin: bin && [...bin] })}, want ${JSON.stringify({ ...want, bin: [...want.bin] })}`
  }
  return null
}

// Ledger records which member consumed which record and checks that the
// member owned the partition in its latest assignment.
class Ledger {
  constructor() {
    this.seen = new Map() // "p@o" -> member
    this.firstOffset = new Map() // "member/p" -> first offset the member consumed there after a (re)start
    this.order = new Map() // partition -> last consumed offset
  }

  consumed(member, partition, offset, key, headers) {
    const id = `${partition}@${offset}`
    if (this.seen.has(id)) {
      failures.push(new Failure(`${id} consumed twice: by ${this.seen.get(id)} and by ${member.name}`))
      return
    }
    this.seen.set(id, member.name)
    if (!member.owns(partition)) {
      failures.push(new Failure(`${member.name} consumed ${id} without owning partition ${partition}`))
    }
    const last = this.order.get(partition)
    if (last !== undefined && offset <= last) {
      failures.push(new Failure(`partition ${partition}: offset ${offset} after ${last}`))
    }
    this.order.set(partition, offset)
    const fk = `${member.name}/${partition}`
    if (!this.firstOffset.has(fk)) this.firstOffset.set(fk, offset)
    const i = Number(key.toString().split('-')[1])
    const bad = checkHeaders(i, headers)
    if (bad) failures.push(new Failure(bad))
  }
}

class Member {
  constructor(kafka, name, groupId, topic, ledger) {
    this.name = name
    this.topic = topic
    this.ledger = ledger
    this.assignment = []
    this.joins = 0
    this.consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10000,
      rebalanceTimeout: 20000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 250,
      retry: { retries: 10 },
    })
    this.consumer.on(this.consumer.events.GROUP_JOIN, e => {
      this.joins++
      this.assignment = (e.payload.memberAssignment[topic] || []).slice().sort()
    })
    this.consumer.on(this.consumer.events.CRASH, e => {
      failures.push(new Failure(`${name} crashed: ${e.payload.error && e.payload.error.message}`))
    })
  }

  owns(partition) {
    return this.assignment.includes(partition)
  }

  async start() {
    await this.consumer.connect()
    await this.consumer.subscribe({ topics: [this.topic], fromBeginning: true })
    await this.consumer.run({
      // Offsets are committed after each batch (autoCommit, the default).
      eachMessage: async ({ partition, message }) => {
        this.ledger.consumed(this, partition, Number(message.offset), message.key, message.headers)
      },
    })
  }

  async stop() {
    await this.consumer.disconnect()
    this.assignment = []
  }
}

// stable: the members' latest assignments split the partitions between them.
function stable(members) {
  const all = members.flatMap(m => m.assignment)
  return (
    members.every(m => m.joins > 0 && m.assignment.length > 0) &&
    all.length === PARTITIONS &&
    new Set(all).size === PARTITIONS
  )
}

async function produce(producer, topic, first, count) {
  const messages = []
  for (let i = first; i < first + count; i++) {
    messages.push({ key: `k-${i}`, value: `v-${i}`, partition: i % PARTITIONS, headers: recordHeaders(i) })
  }
  await producer.send({ topic, acks: -1, messages })
}

async function committed(admin, groupId, topic) {
  const res = await admin.fetchOffsets({ groupId, topics: [topic] })
  const out = {}
  for (const { partition, offset } of res[0].partitions) out[partition] = Number(offset)
  return out
}

async function main() {
  const brokers = process.argv[2]
  if (!brokers) {
    console.error('usage: kafkajs_groups.js BROKERS')
    process.exit(2)
  }
  const suffix = `${process.pid}-${Date.now()}`
  const topic = `smoke-kafkajs-groups-${suffix}`
  const groupId = `g-kafkajs-${suffix}`
  const kafka = new Kafka({
    clientId: 'klog-smoke-kafkajs',
    brokers: brokers.split(','),
    logLevel: logLevel.WARN,
    logCreator: quietLog,
    retry: { retries: 10 },
  })
  const admin = kafka.admin()
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  const ledger = new Ledger()
  const members = []
  try {
    await admin.connect()
    await producer.connect()
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: STEP_TIMEOUT_MS,
    })
    if (!created) throw new Failure(`topic ${topic} already existed`)

    const a = new Member(kafka, 'A', groupId, topic, ledger)
    const b = new Member(kafka, 'B', groupId, topic, ledger)
    members.push(a, b)
    await a.start()
    await b.start()
    await waitUntil('A and B to split the partitions', () => stable([a, b]))
    log(`group stable: A owns [${a.assignment}], B owns [${b.assignment}]`)

    await produce(producer, topic, 0, 200)
    await waitUntil('200 records to be consumed', () => ledger.seen.size >= 200)
    const want = {}
    for (let p = 0; p < PARTITIONS; p++) want[p] = 50
    await waitUntil('offsets 50 committed on every partition', async () => {
      const c = await committed(admin, groupId, topic)
      return JSON.stringify(c) === JSON.stringify(want)
    })
    const byMember = { A: 0, B: 0 }
    for (const who of ledger.seen.values()) byMember[who]++
    if (byMember.A === 0 || byMember.B === 0) throw new Failure(`consumed per member ${JSON.stringify(byMember)}`)
    log(`200 records consumed once each (A ${byMember.A}, B ${byMember.B}) with headers; offsets committed`)

    // Restart B. A gets everything for a moment, then the new B joins.
    await b.stop()
    members.splice(members.indexOf(b), 1)
    await waitUntil('A to own every partition after B left', () => a.assignment.length === PARTITIONS)
    const b2 = new Member(kafka, 'B2', groupId, topic, ledger)
    members.push(b2)
    const aJoins = a.joins
    await b2.start()
    await waitUntil('A and the restarted B to split the partitions', () => a.joins > aJoins && stable([a, b2]))
    log(`after restart: A owns [${a.assignment}], B2 owns [${b2.assignment}]`)
    const aFirst = new Map([...ledger.firstOffset].filter(([k]) => k.startsWith('A/')))

    await produce(producer, topic, 200, 20)
    await waitUntil('the 20 new records to be consumed', () => ledger.seen.size >= 220)
    for (const [k, off] of ledger.firstOffset) {
      if (k.startsWith('B2/') && off !== 50) throw new Failure(`restarted B started ${k} at offset ${off}, want 50`)
    }
    for (const [k, off] of ledger.firstOffset) {
      if (k.startsWith('A/') && !aFirst.has(k) && off !== 50) throw new Failure(`A started ${k} at offset ${off}, want 50`)
    }
    if (ledger.seen.size !== 220) throw new Failure(`consumed ${ledger.seen.size} records, want 220`)
    for (let p = 0; p < PARTITIONS; p++) want[p] = 55
    await waitUntil('offsets 55 committed on every partition', async () => {
      const c = await committed(admin, groupId, topic)
      return JSON.stringify(c) === JSON.stringify(want)
    })
    if (failures.length) throw failures[0]
    log('restarted consumer resumed at the committed offsets; 20 more records consumed once each')
  } finally {
    for (const m of members) await m.stop().catch(() => {})
    await producer.disconnect().catch(() => {})
    await admin.disconnect().catch(() => {})
  }
}

const overall = setTimeout(() => {
  console.error('kafkajs-groups: FAIL: gave up after 90s')
  process.exit(1)
}, 90000)

main().then(
  () => {
    clearTimeout(overall)
    log('ok')
    process.exit(0)
  },
  err => {
    clearTimeout(overall)
    console.error('kafkajs-groups: FAIL: ' + (err instanceof Failure ? err.message : err.stack || err))
    process.exit(1)
  }
)
