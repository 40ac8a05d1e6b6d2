// The transcript repository contract against LMDB.
import t from 'tap';
import { openLmdbTranscriptRepository } from '../dist/src/records/lmdb/oracle/transcripts.js';
import { transcriptRepositoryContract } from './contracts/transcripts.js';
import { tempStore } from './helpers/store.js';

transcriptRepositoryContract(t, async (t) => openLmdbTranscriptRepository(tempStore(t, 'repo-transcripts-')));
