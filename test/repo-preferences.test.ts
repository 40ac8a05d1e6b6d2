// The preferences repository contract against LMDB.
import t from 'tap';
import { openLmdbPreferences } from '../dist/src/records/lmdb/oracle/preferences.js';
import { preferencesRepositoryContract } from './contracts/preferences.js';
import { tempStore } from './helpers/store.js';

preferencesRepositoryContract(t, async (t) => openLmdbPreferences(tempStore(t, 'repo-preferences-')));
