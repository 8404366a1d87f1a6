// Transactions smoke test with kafkajs.
//
// commit-abort: a transactional producer commits 20 records and aborts 20
// more, then commits an "end" record to every partition. A read_committed
// consumer (readUncommitted: false) reads up to the end records and sees
// exactly the committed ones; a read_uncommitted consumer sees the aborted
// ones too.
//
// send-offsets: 40 input records are consumed by a group with autoCommit
// off; each is copied to an output topic in a transaction that also commits
// the group's offset (transaction.sendOffsets). The output holds every
// record exactly once and the group's committed offsets are at the end of
// the input.
//
//   node scripts/smoke/kafkajs_txn.js BROKERS
//
// Every wait polls for a condition and gives up at a deadline.
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const { Kafka, logLevel } = require('kafkajs')

const PARTITIONS = 2
const STEP_TIMEOUT_MS = 30000
const RUN = `-${Date.now() % 100000000}`

class Failure extends Error {}

function log(msg) {
  console.log('kafkajs-txn: ' + msg)
}

// Errors found inside eachMessage handlers, raised by waitUntil.
const failures = []

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

function check(cond, msg) {
  if (!cond) throw new Failure(msg)
}

function txnProducer(kafka, id) {
  return kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 60000 })
}

// readUntilEnds consumes topic from the start until every partition has
// delivered its "end" record, and returns the other values in order.
async function readUntilEnds(kafka, topic, readUncommitted) {
  const consumer = kafka.consumer({
    groupId: `smoke-kafkajs-txn-reader-${readUncommitted}${RUN}`,
    readUncommitted,
    maxWaitTimeInMs: 250,
    sessionTimeout: 10000,
    heartbeatInterval: 500,
  })
  const values = []
  const ended = new Set()
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const v = message.value.toString()
        if (v === 'end') ended.add(partition)
        else values.push(v)
      },
    })
    await waitUntil(`the end records of ${topic} (${readUncommitted ? 'read_uncommitted' : 'read_committed'})`, () => ended.size === PARTITIONS)
  } finally {
    await consumer.disconnect()
  }
  return values
}

function sorted(a) {
  return a.slice().sort()
}

async function commitAbort(kafka, admin) {
  const topic = 'smoke-kafkajs-txn' + RUN
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true })
  const producer = txnProducer(kafka, 'smoke-kafkajs-txn-ca' + RUN)
  await producer.connect()
  try {
    const committed = []
    const aborted = []
    let txn = await producer.transaction()
    for (let i = 0; i < 20; i++) committed.push(`committed-${i}`)
    await txn.send({ topic, messages: committed.map((value, i) => ({ key: String(i), value })) })
    await txn.commit()

    txn = await producer.transaction()
    for (let i = 0; i < 20; i++) aborted.push(`aborted-${i}`)
    await txn.send({ topic, messages: aborted.map((value, i) => ({ key: String(i), value })) })
    await txn.abort()

    txn = await producer.transaction()
    const ends = []
    for (let p = 0; p < PARTITIONS; p++) ends.push({ partition: p, value: 'end' })
    await txn.send({ topic, messages: ends })
    await txn.commit()

    const rc = await readUntilEnds(kafka, topic, false)
    check(JSON.stringify(sorted(rc)) === JSON.stringify(sorted(committed)),
      `read_committed saw ${rc.length} records: ${sorted(rc).slice(0, 5)}`)
    const ru = await readUntilEnds(kafka, topic, true)
    check(JSON.stringify(sorted(ru)) === JSON.stringify(sorted(committed.concat(aborted))),
      `read_uncommitted saw ${ru.length} records, want 40`)
    log('commit-abort: read_committed 20, read_uncommitted 40')
  } finally {
    await producer.disconnect()
  }
}

async function sendOffsets(kafka, admin) {
  const src = 'smoke-kafkajs-txn-in' + RUN
  const dst = 'smoke-kafkajs-txn-out' + RUN
  const groupId = 'smoke-kafkajs-txn-ctp' + RUN
  const n = 40
  await admin.createTopics({
    topics: [{ topic: src, numPartitions: PARTITIONS }, { topic: dst, numPartitions: PARTITIONS }],
    waitForLeaders: true,
  })
  const plain = kafka.producer()
  await plain.connect()
  const input = []
  for (let i = 0; i < n; i++) input.push({ partition: i % PARTITIONS, key: String(i), value: `in-${i}` })
  await plain.send({ topic: src, messages: input })
  await plain.disconnect()

  const producer = txnProducer(kafka, 'smoke-kafkajs-txn-ctp' + RUN)
  await producer.connect()
  const consumer = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 250, sessionTimeout: 10000, heartbeatInterval: 500 })
  await consumer.connect()
  let copied = 0
  try {
    await consumer.subscribe({ topics: [src], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const txn = await producer.transaction()
        try {
          await txn.send({ topic: dst, messages: [{ partition, key: message.key, value: 'out-' + message.value.toString().slice(3) }] })
          await txn.sendOffsets({
            consumerGroupId: groupId,
            topics: [{ topic, partitions: [{ partition, offset: String(Number(message.offset) + 1) }] }],
          })
          await txn.commit()
          copied++
        } catch (e) {
          await txn.abort().catch(() => {})
          failures.push(new Failure(`transaction for ${topic}[${partition}]@${message.offset}: ${e.message}`))
        }
      },
    })
    await waitUntil(`${n} records copied`, () => copied >= n)
  } finally {
    await consumer.disconnect()
    await producer.disconnect()
  }
  check(copied === n, `copied ${copied} records, want ${n}`)

  const ends = await admin.fetchTopicOffsets(src)
  const fetched = await admin.fetchOffsets({ groupId, topics: [src] })
  for (const e of ends) {
    const c = fetched[0].partitions.find(p => p.partition === e.partition)
    check(c && c.offset === e.high, `group offset of ${src}[${e.partition}] = ${c && c.offset}, want ${e.high}`)
  }

  // Mark the end of the output and read it back committed.
  const marker = txnProducer(kafka, 'smoke-kafkajs-txn-end' + RUN)
  await marker.connect()
  const txn = await marker.transaction()
  const endRecs = []
  for (let p = 0; p < PARTITIONS; p++) endRecs.push({ partition: p, value: 'end' })
  await txn.send({ topic: dst, messages: endRecs })
  await txn.commit()
  await marker.disconnect()
  const out = await readUntilEnds(kafka, dst, false)
  const want = input.map(r => 'out-' + r.value.slice(3))
  check(JSON.stringify(sorted(out)) === JSON.stringify(sorted(want)), `output holds ${out.length} records, want ${n} exactly once`)
  log(`send-offsets: ${n} records copied exactly once; group offsets at the end`)
}

// fencing: a second producer with the same transactional id fences the
// first; the zombie's commit fails and read_committed sees only the new
// producer's records.
async function fencing(kafka, admin) {
  const topic = 'smoke-kafkajs-fence' + RUN
  const id = 'smoke-kafkajs-fence-id' + RUN
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true })
  const zombie = txnProducer(kafka, id)
  await zombie.connect()
  const fresh = txnProducer(kafka, id)
  try {
    const zt = await zombie.transaction()
    await zt.send({ topic, messages: [{ partition: 0, value: 'zombie' }] })
    await fresh.connect()
    const ft = await fresh.transaction()
    const ends = []
    for (let p = 0; p < PARTITIONS; p++) ends.push({ partition: p, value: 'end' })
    await ft.send({ topic, messages: [{ partition: 0, value: 'fresh' }].concat(ends) })
    await ft.commit()
    let fenced = null
    try {
      await zt.commit()
    } catch (err) {
      fenced = err
    }
    check(fenced !== null, 'the fenced producer committed its transaction')
    check(/FENCED|EPOCH|INVALID_TXN_STATE|fenced|epoch/.test(String(fenced.type || '') + String(fenced.message || '')),
      `the zombie's commit failed for another reason: ${fenced && (fenced.type || fenced.message)}`)
    const rc = await readUntilEnds(kafka, topic, false)
    check(JSON.stringify(rc) === JSON.stringify(['fresh']), `read_committed saw ${JSON.stringify(rc)}, want only the fresh producer's record`)
    log(`fencing: the zombie's commit failed (${fenced.type || fenced.message}); read_committed sees only the fresh producer`)
  } finally {
    await zombie.disconnect().catch(() => {})
    await fresh.disconnect()
  }
}

async function main() {
  const brokers = process.argv[2]
  if (!brokers) {
    console.error('usage: kafkajs_txn.js BROKERS')
    process.exit(2)
  }
  const kafka = new Kafka({
    clientId: 'smoke-kafkajs-txn',
    brokers: brokers.split(','),
    logLevel: logLevel.ERROR,
    retry: { retries: 8 },
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    await commitAbort(kafka, admin)
    await fencing(kafka, admin)
    await sendOffsets(kafka, admin)
  } finally {
    await admin.disconnect()
  }
}

main().then(
  () => log('ok'),
  err => {
    console.error('kafkajs-txn: FAIL: ' + (err && err.stack ? err.stack : err))
    process.exit(1)
  },
)
